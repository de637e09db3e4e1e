// The doctest main shared by every test executable: the executable's up-front capability
// requirements (tests/support/skip.hpp) are probed before any test case runs.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>

#include "tests/support/skip.hpp"

namespace {

// doctest options that only list or print (no test case runs): no requirement applies.
bool query_only(int argc, char **argv)
{
	static const char *const kQueries[] = {"-h",
					       "--help",
					       "-?",
					       "-v",
					       "--version",
					       "-c",
					       "--count",
					       "-ltc",
					       "--list-test-cases",
					       "-lts",
					       "--list-test-suites",
					       "-lr",
					       "--list-reporters"};
	for (int i = 1; i < argc; i++)
		for (const char *q : kQueries)
			if (std::strcmp(argv[i], q) == 0)
				return true;
	return false;
}

}  // namespace

int main(int argc, char **argv)
{
	doctest::Context context(argc, argv);
	if (!query_only(argc, argv))
		kvfdp::test::check_requirements();
	const int rc = context.run();
	if (context.shouldExit())
		return rc;
	return kvfdp::test::finish_run(rc);
}
