// kvfdp against a real kvfdpd control server that refuses the connection (over its limits):
// the CLI reports the server's one-line reason (even when the server closed before the
// request was sent), exit 1.
#include <doctest/doctest.h>

#include <vector>

#include "tests/cli/cli_test_util.hpp"
#include "tests/daemon/control_client_util.hpp"

using namespace kvfdp::cli;
using namespace kvfdp::cli::test;
using namespace std::chrono_literals;

TEST_CASE("cli: a connection the daemon refuses over its limits reports the daemon's reason")
{
	kvfdp::daemon::ControlLimits l;
	l.max_connections = 1;
	l.reserved_for_root = 0;
	l.idle_timeout = 600s;
	kvfdp::test::TestServer ts(l);
	kvfdp::UniqueFd held = kvfdp::test::connect_to(ts.path);
	REQUIRE(kvfdp::test::ask(held.get(), "{\"cmd\":\"hold\"}")["ok"] == true);
	for (int i = 0; i < 20; i++) {  // the close races the request; each try must say why
		Ran r = run_cli({"ruh", "--socket", ts.path});
		INFO("try " << i << ": " << r.err);
		CHECK(r.rc == kExitError);
		CHECK(r.err.find(
			      "kvfdpd refused 'ruh': kvfdpd's control socket has 1 connections open, its limit: retry") !=
		      std::string::npos);
		CHECK(r.err.find('\n') == r.err.size() - 1);
	}
}
