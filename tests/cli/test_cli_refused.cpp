// kvfdp against a real kvfdpd control server that refuses the connection (over its limits):
// the CLI reports the server's one-line reason (even when the server closed before the
// request was sent), exit 1.
#include <doctest/doctest.h>

#include <vector>

#include "tests/cli/cli_test_util.hpp"
#include "tests/kvfdpd/control_client_util.hpp"

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
		CHECK(r.rc == kvfdp::proto::kExitError);
		CHECK(r.err.find(
			      "kvfdpd refused 'ruh': kvfdpd's control socket has 1 connections open, its limit: retry") !=
		      std::string::npos);
		CHECK(r.err.find('\n') == r.err.size() - 1);
	}
}

TEST_CASE(
	"cli: kvfdp stop refused to a non-admin prints kvfdpd's one line naming the group, exit 1")
{
	// The server answers as kvfdpd answers a client outside kvfdp-admin (the real decision,
	// access_refusal; test_daemon_control_root sees the server make it for another uid).
	kvfdp::test::TempDir d;
	const std::string path = d.path + "/kvfdpd.sock";
	auto s = kvfdp::daemon::ControlServer::listen(path, [](std::string_view line) {
		kvfdp::daemon::Request r;
		std::string err;
		if (!kvfdp::daemon::parse_request(line, r, err))
			return kvfdp::daemon::reply_error(err);
		const std::string why =
			kvfdp::daemon::access_refusal(r.cmd, kvfdp::daemon::Peer{1000, false});
		return why.empty() ? kvfdp::daemon::reply_ok(nlohmann::json::object())
				   : kvfdp::daemon::reply_error(why);
	});
	REQUIRE_MESSAGE(s.ok(), s.error().message());
	auto loop = kvfdp::daemon::EventLoop::create();
	REQUIRE(loop.ok());
	(*s)->start(**loop);
	(*loop)->start();
	for (const std::vector<std::string> &args :
	     {std::vector<std::string>{"stop"}, std::vector<std::string>{"stop", "--force"}}) {
		std::vector<std::string> a = args;
		a.insert(a.end(), {"--socket", path});
		Ran r = run_cli(a);
		CHECK(r.rc == kvfdp::proto::kExitError);
		CHECK(r.out.empty());
		CHECK(r.err ==
		      "kvfdp: kvfdpd refused 'stop': stop needs root or membership of group kvfdp-admin "
		      "(usermod -aG kvfdp-admin USER, then log in again); nothing was changed\n");
	}
}
