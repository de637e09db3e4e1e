// The self-test of the skip contract (tests/support/skip.hpp): what this executable does is
// chosen by KVFDP_SKIP_PROBE, and tests/CMakeLists.txt checks its exit status and output.
//   fail_then_skip: a failed check, then a skip -> exit 1 ("not a skip"), never 77
//   skip:           a skip before any check      -> exit 77, "SKIP: probe: ..."
//   case:           a case_requires case missing -> the other case passes, then exit 77
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "tests/support/skip.hpp"

namespace {

std::string mode()
{
	const char *m = std::getenv("KVFDP_SKIP_PROBE");
	return m ? m : "";
}

}  // namespace

TEST_CASE("probe: a check that fails in fail_then_skip mode")
{
	CHECK(mode() != "fail_then_skip");
}

TEST_CASE("probe: a skip")
{
	if (mode() == "fail_then_skip" || mode() == "skip")
		kvfdp::test::skip("probe", "the probe's capability is missing");
}

TEST_CASE("probe: a case whose capability is missing in case mode" *
	  kvfdp::test::case_requires("probe", [] {
		  return mode() == "case" ? std::string("the probe case's capability is missing")
					  : std::string();
	  }))
{
	CHECK(true);
}
