// kvfdp-ublk-features (guest only): prints the ublk features the running driver offers
// (GET_FEATURES), one name per line, so scenarios gate on what the kernel probes as offering,
// never on its version. Exit 1 with the reason when ublk_drv is absent or refuses the command.
#include <cstdio>

#include "kvfdpd/ublk/ctrl.hpp"
#include "kvfdpd/ublk/features.hpp"

int main()
{
	auto ctl = kvfdp::ublk::Control::open();
	if (!ctl) {
		std::fprintf(stderr, "kvfdp-ublk-features: %s\n", ctl.error().message().c_str());
		return 1;
	}
	auto f = (*ctl)->get_features();
	if (!f) {
		std::fprintf(stderr, "kvfdp-ublk-features: GET_FEATURES: %s\n",
			     f.error().message().c_str());
		return 1;
	}
	for (const auto &n : kvfdp::ublk::feature_names(*f))
		std::printf("%s\n", n.c_str());
	return 0;
}
