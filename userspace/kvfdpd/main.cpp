// kvfdpd: turns an FDP namespace into a ublk block device and places each write on the
// reclaim unit handle of its file's lifetime class.
#include <CLI/CLI.hpp>

#include "common/log.hpp"

int main(int argc, char **argv)
{
	CLI::App app{"kvfdpd: the kvfdp ublk placement daemon.\n"
		     "Exposes an FDP namespace as /dev/ublkbN and places each write on the\n"
		     "reclaim unit handle chosen by its file's lifetime class.",
		     "kvfdpd"};
	std::string config = "/etc/kvfdp/kvfdp.toml";
	std::string device;
	app.add_option("-c,--config", config, "policy config (TOML)")->capture_default_str();
	app.add_option("-d,--device", device, "FDP namespace, e.g. /dev/ng0n1");
	CLI11_PARSE(app, argc, argv);

	kvfdp::log::set_program("kvfdpd");
	kvfdp::log::error("the daemon's data path is not built yet; see issue 7");
	return 2;
}
