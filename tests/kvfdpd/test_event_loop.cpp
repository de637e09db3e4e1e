// The control socket and GET /metrics on one EventLoop, as kvfdpd runs them: a client that
// stalls one server (half a request, garbage, replies it never reads, a 64 MiB reply) holds
// only its own buffers, never the other server; and the loop and its servers stop and are
// destroyed safely in any order, clients connected.
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>

#include <memory>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/kvfdpd/control_client_util.hpp"
#include "tests/kvfdpd/http_client_util.hpp"
#include "kvfdpd/daemon/ctl/control_proto.hpp"
#include "kvfdpd/daemon/ctl/control_server.hpp"
#include "kvfdpd/daemon/ctl/event_loop.hpp"
#include "kvfdpd/daemon/ctl/http_metrics.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;
using namespace kvfdp::test;

namespace {

const std::string kText = "# HELP kvfdp_x x\n# TYPE kvfdp_x gauge\nkvfdp_x 1\n";
constexpr size_t kBig = 64 << 20;
const std::string kGet = "GET /metrics HTTP/1.1\r\n\r\n";

// Timeouts longer than any test: nothing here is closed for being slow.
ControlLimits patient_control()
{
	ControlLimits l;
	l.idle_timeout = l.incomplete_line_timeout = l.unread_reply_timeout =
		std::chrono::minutes(10);
	l.max_reply = 2 * kBig;  // kvfdpd's own are bounded lower; this tests the loop
	return l;
}

// Both servers on one started loop. The control socket answers {"cmd":"big"} with a 64 MiB
// reply line and anything else with its cmd; /metrics renders metrics_text.
struct Both {
	TempDir dir;
	std::string path = dir.path + "/kvfdpd.sock";
	std::unique_ptr<EventLoop> loop;
	std::unique_ptr<ControlServer> control;
	std::unique_ptr<HttpMetricsServer> http;

	explicit Both(std::string metrics_text = kText)
	{
		auto l = EventLoop::create();
		REQUIRE_MESSAGE(l.ok(), l.error().message());
		loop = std::move(*l);
		auto c = ControlServer::listen(
			path,
			[](std::string_view line) {
				Request r;
				std::string err;
				if (!parse_request(line, r, err))
					return reply_error(err);
				if (r.cmd == "big")
					return reply_ok(std::string(kBig, 'b'));
				return reply_ok(nlohmann::json{{"cmd", r.cmd}});
			},
			patient_control());
		REQUIRE_MESSAGE(c.ok(), c.error().message());
		control = std::move(*c);
		HttpMetricsOptions o;
		o.listen = "127.0.0.1:0";
		o.timeout = std::chrono::minutes(10);
		auto h = HttpMetricsServer::listen(
			o, [text = std::move(metrics_text)] { return text; });
		REQUIRE_MESSAGE(h.ok(), h.error().message());
		http = std::move(*h);
		control->start(*loop);
		http->start(*loop);
		loop->start();
	}
	// A fresh control client's reply's cmd ("" when it is not {"ok":true,...}).
	std::string control_cmd(const std::string &cmd)
	{
		UniqueFd c = connect_to(path);
		const nlohmann::json j = ask(c.get(), "{\"cmd\":\"" + cmd + "\"}");
		return j.value("ok", false) ? j["data"].value("cmd", "") : "";
	}
	std::string metrics() { return http::body_of(http::ask(http->port(), kGet)); }
};

// Writes requests without reading a reply until the socket takes no more (the server stopped
// reading: its queued replies are over the limit); how many it took.
size_t flood(int fd)
{
	const std::string req = "{\"cmd\":\"status\"}\n";
	size_t n = 0;
	while (n < 1000000 && ::send(fd, req.data(), req.size(), MSG_NOSIGNAL | MSG_DONTWAIT) ==
				      static_cast<ssize_t>(req.size()))
		n++;
	return n;
}

// n bytes from fd: fewer only when the server closes first (or hangs, which FAILs).
std::string read_n(int fd, size_t n)
{
	std::string out;
	char buf[65536];
	while (out.size() < n) {
		pollfd p{fd, POLLIN, 0};
		REQUIRE_MESSAGE(::poll(&p, 1, kHangMs) == 1, "the server hung");
		const ssize_t r = ::recv(fd, buf, std::min(sizeof buf, n - out.size()), 0);
		if (r <= 0)
			break;
		out.append(buf, static_cast<size_t>(r));
	}
	return out;
}

}  // namespace

TEST_CASE("event loop: a half-sent HTTP request does not block control replies")
{
	Both b;
	UniqueFd half = http::dial(b.http->port());
	http::send_all(half.get(), "GET /metr");
	CHECK(b.control_cmd("status") == "status");
	CHECK(b.control_cmd("ruh") == "ruh");
	// The half is kept: its end completes the request.
	http::send_all(half.get(), "ics HTTP/1.1\r\n\r\n");
	CHECK(http::body_of(http::read_all(half.get())) == kText);
}

TEST_CASE("event loop: garbage or a never-reading client on the control socket does not block "
	  "GET /metrics")
{
	Both b;
	// Garbage gets today's one-line error, and the connection stays open.
	UniqueFd garbage = connect_to(b.path);
	REQUIRE(send_all(garbage.get(), std::string("\x01\xff garbage\n", 11)));
	Reader gr{garbage.get(), {}};
	CHECK(gr.line() ==
	      "{\"ok\":false,\"error\":\"malformed request: not JSON; send one object per line, "
	      "e.g. {\\\"cmd\\\":\\\"status\\\"}\"}");
	// A line that never ends, and a client that sends and never reads.
	REQUIRE(send_all(garbage.get(), "{\"cmd\":\"never ending"));
	UniqueFd deaf = connect_to(b.path);
	CHECK(flood(deaf.get()) > 0);
	CHECK(b.metrics() == kText);
	CHECK(b.control_cmd("status") == "status");
	// The deaf client's replies were kept: the first is still there to read.
	Reader dr{deaf.get(), {}};
	CHECK(dr.line() == "{\"ok\":true,\"data\":{\"cmd\":\"status\"}}");
}

TEST_CASE("event loop: a 64 MiB unread reply does not block the other server")
{
	SUBCASE("on the control socket")
	{
		Both b;
		UniqueFd lazy = connect_to(b.path);
		REQUIRE(send_all(lazy.get(), "{\"cmd\":\"big\"}\n"));
		CHECK(b.metrics() == kText);
		CHECK(b.control_cmd("status") == "status");
		// Sent in pieces, it arrives whole: one line of 64 MiB in its envelope.
		const std::string want = reply_ok(std::string(kBig, 'b'));
		CHECK(read_n(lazy.get(), want.size()) == want);
	}
	SUBCASE("on /metrics")
	{
		const std::string big(kBig, 'm');
		Both b(big);
		UniqueFd lazy = http::dial(b.http->port());
		http::send_all(lazy.get(), kGet);
		CHECK(b.control_cmd("status") == "status");
		UniqueFd garbage = connect_to(b.path);
		CHECK(ask(garbage.get(), "nonsense")["ok"] == false);
		CHECK(http::body_of(http::read_all(lazy.get())) == big);
	}
}

TEST_CASE("event loop: stop and destroy are safe in any order, clients connected")
{
	SUBCASE("the loop stopped: the servers stay on it, unserved, and are served again")
	{
		Both b;
		UniqueFd half = http::dial(b.http->port());
		http::send_all(half.get(), "GET /metr");
		UniqueFd idle = connect_to(b.path);
		CHECK(ask(idle.get(), "{\"cmd\":\"a\"}")["data"]["cmd"] == "a");
		b.loop->stop();
		b.loop->stop();  // idempotent
		b.loop->start();
		CHECK(ask(idle.get(), "{\"cmd\":\"b\"}")["data"]["cmd"] == "b");
		http::send_all(half.get(), "ics HTTP/1.1\r\n\r\n");
		CHECK(http::body_of(http::read_all(half.get())) == kText);
	}
	SUBCASE("a server stopped while its clients are connected: they see the end")
	{
		Both b;
		UniqueFd idle = connect_to(b.path);
		REQUIRE(send_all(idle.get(), "{\"cmd\":\"unfin"));
		UniqueFd half = http::dial(b.http->port());
		http::send_all(half.get(), "GET /metr");
		// Both sockets are accepted (served) before the stops.
		CHECK(b.control_cmd("status") == "status");
		CHECK(b.metrics() == kText);
		b.control->stop();
		b.control->stop();
		Reader r{idle.get(), {}};
		CHECK(r.closed_without_more());
		CHECK(b.metrics() == kText);  // the other server serves on
		b.http.reset();               // destroyed without stop
		CHECK(http::read_all(half.get()).empty());
	}
	SUBCASE("the loop destroyed without stop, before its servers")
	{
		Both b;
		UniqueFd idle = connect_to(b.path);
		CHECK(ask(idle.get(), "{\"cmd\":\"a\"}")["ok"] == true);
		UniqueFd half = http::dial(b.http->port());
		http::send_all(half.get(), "GET /metr");
		CHECK(b.metrics() == kText);
		b.loop.reset();
		Reader r{idle.get(), {}};
		CHECK(r.closed_without_more());
		CHECK(http::read_all(half.get()).empty());
		b.control->stop();  // no loop: nothing to do
		b.control.reset();
		struct stat st {};
		CHECK(::lstat(b.path.c_str(), &st) != 0);  // the socket file went with its server
	}
}
