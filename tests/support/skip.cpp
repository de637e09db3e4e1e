// Skip helpers for capability-gated tests.
#include "tests/support/skip.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace kvfdp::test {

void skip(const char *reason)
{
	std::fprintf(stderr, "SKIP: %s\n", reason);
	std::fflush(stderr);
	std::fflush(stdout);
	std::_Exit(77);
}

void require_root(const char *what)
{
	if (::geteuid() != 0)
		skip((std::string(what) + " needs root").c_str());
}

} // namespace kvfdp::test
