// libFuzzer target for kvfdpd's control protocol (built by tools/fuzz/control.sh with
// clang -fsanitize=fuzzer,address,undefined): a violated property aborts with its reason.
#include <cstdio>
#include <cstdlib>

#include "tests/kvfdpd/fuzz_control.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const std::string why = kvfdp::test::check_control_input(
		std::string_view(reinterpret_cast<const char *>(data), size));
	if (!why.empty()) {
		std::fprintf(stderr, "fuzz_control: %s\n", why.c_str());
		std::abort();
	}
	return 0;
}
