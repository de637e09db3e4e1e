// ControlServer over real Unix sockets: its limits (idle and stalled connections closed,
// connection caps with one-line refusals, the line limit, reply back-pressure) and the
// start-time refusals of listen(). The caps per uid and root's reserved slots, which need a
// second uid, are in test_control_root.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <fcntl.h>
#include <vector>

#include "tests/kvfdpd/control_client_util.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;
using namespace kvfdp::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

ControlLimits long_timeouts()
{
	ControlLimits l;
	l.idle_timeout = 60s;
	l.incomplete_line_timeout = 20s;
	l.unread_reply_timeout = 60s;
	return l;
}

}  // namespace

TEST_CASE("control socket: requests on one connection are answered in order")
{
	TestServer ts(long_timeouts());
	UniqueFd c = connect_to(ts.path);
	REQUIRE(send_all(c.get(), "{\"cmd\":\"a\"}\n{\"cmd\":\"b\"}\r\n{\"cmd\":\"c\"}\n"));
	Reader r{c.get(), {}};
	for (const char *want : {"a", "b", "c"}) {
		auto l = r.line();
		REQUIRE(l.has_value());
		CHECK(json::parse(*l)["data"]["cmd"] == want);
	}
}

TEST_CASE("control socket: garbage gets a one-line error and the connection stays usable")
{
	TestServer ts(long_timeouts());
	UniqueFd c = connect_to(ts.path);
	json e = ask(c.get(), std::string("\x01\xff garbage", 10));
	CHECK(e["ok"] == false);
	CHECK(e["error"].get<std::string>().rfind("malformed request: ", 0) == 0);
	json ok = ask(c.get(), "{\"cmd\":\"status\"}");
	CHECK(ok["ok"] == true);
	CHECK(ok["data"]["cmd"] == "status");
}

TEST_CASE("control socket: a line over 64 KiB gets one error line, then the connection is closed")
{
	TestServer ts(long_timeouts());
	UniqueFd c = connect_to(ts.path);
	// Complete lines before it are answered first.
	REQUIRE(send_all(c.get(),
			 "{\"cmd\":\"before\"}\n" + std::string(kMaxRequestLine + 4096, 'x')));
	Reader r{c.get(), {}};
	auto first = r.line();
	REQUIRE(first.has_value());
	CHECK(json::parse(*first)["data"]["cmd"] == "before");
	auto err = r.line();
	REQUIRE(err.has_value());
	CHECK(*err == "{\"ok\":false,\"error\":\"request line exceeds 65536 bytes\"}");
	CHECK(r.closed_without_more());
	// The server still serves others.
	UniqueFd d = connect_to(ts.path);
	CHECK(ask(d.get(), "{\"cmd\":\"after\"}")["ok"] == true);
}

TEST_CASE(
	"control socket: idle, half-sent and unread connections are closed when their time passes")
{
	ControlLimits l = long_timeouts();
	l.max_queued_reply = 4096;
	TestServer ts(l);
	UniqueFd idle = connect_to(ts.path);
	UniqueFd used = connect_to(ts.path);  // answered once, then idle
	CHECK(ask(used.get(), "{\"cmd\":\"x\"}")["ok"] == true);
	UniqueFd half = connect_to(ts.path);
	REQUIRE(send_all(half.get(), "{\"cmd\":\"sta"));
	// A client that sends requests and never reads the replies.
	UniqueFd unread = connect_to(ts.path);
	REQUIRE(::fcntl(unread.get(), F_SETFL, O_NONBLOCK) == 0);
	const std::string req = "{\"cmd\":\"flood\"}\n";
	size_t sent = 0;
	while (::send(unread.get(), req.data(), req.size(), MSG_NOSIGNAL) ==
	       static_cast<ssize_t>(req.size()))
		sent++;
	CHECK(sent > 0);

	// Time passes (in steps past every timeout): each of them is closed by the server.
	for (int fd : {idle.get(), used.get(), half.get(), unread.get()}) {
		INFO("fd " << fd << " (idle " << idle.get() << ", used " << used.get() << ", half "
			   << half.get() << ", unread " << unread.get() << ")");
		REQUIRE(ts.advance_until_closed(fd, 120s));
		REQUIRE(::fcntl(fd, F_SETFL, 0) == 0);
		Reader r{fd, {}};
		// The unread client's replies are still there to read; then the close.
		while (r.line().has_value())
			;
		CHECK(r.eof);
	}
	// A connection made after the time passed is served.
	UniqueFd fresh = connect_to(ts.path);
	CHECK(ask(fresh.get(), "{\"cmd\":\"fresh\"}")["data"]["cmd"] == "fresh");
}

TEST_CASE("control socket: a client that sends far ahead of reading gets every reply, in order")
{
	ControlLimits l = long_timeouts();
	l.max_queued_reply = 4096;  // about 100 replies
	TestServer ts(l);
	UniqueFd c = connect_to(ts.path);
	REQUIRE(::fcntl(c.get(), F_SETFL, O_NONBLOCK) == 0);
	// Send until the socket buffers are full: the server stopped reading at its reply limit.
	std::string stream;
	for (int i = 0; i < 40000; i++)
		stream += "{\"cmd\":\"r" + std::to_string(i) + "\"}\n";
	size_t off = 0;
	while (off < stream.size()) {
		const ssize_t n = ::send(c.get(), stream.data() + off,
					 std::min<size_t>(4096, stream.size() - off), MSG_NOSIGNAL);
		if (n < 0) {
			REQUIRE((errno == EAGAIN || errno == EWOULDBLOCK));
			break;
		}
		off += static_cast<size_t>(n);
	}
	const size_t sent = static_cast<size_t>(
		std::count(stream.begin(), stream.begin() + static_cast<long>(off), '\n'));
	const unsigned answered_while_blocked = ts.served->load();
	// The server stops reading while its queued replies are over the limit: the client's
	// sends blocked before all were answered.
	CHECK(answered_while_blocked < sent);
	REQUIRE(::fcntl(c.get(), F_SETFL, 0) == 0);
	Reader r{c.get(), {}};
	for (size_t i = 0; i < sent; i++) {
		auto line = r.line();
		REQUIRE_MESSAGE(line.has_value(), "reply " << i << " of " << sent << " missing");
		REQUIRE(json::parse(*line)["data"]["cmd"] == "r" + std::to_string(i));
	}
}

TEST_CASE(
	"control socket: past the connection limit a client gets one line and is closed; a freed slot is reused")
{
	ControlLimits l = long_timeouts();
	l.max_connections = 3;
	l.reserved_for_root = 0;
	l.max_per_uid = 3;
	TestServer ts(l);
	std::vector<UniqueFd> held;
	for (int i = 0; i < 3; i++) {
		held.push_back(connect_to(ts.path));
		CHECK(ask(held.back().get(), "{\"cmd\":\"held\"}")["ok"] == true);
	}
	UniqueFd extra = connect_to(ts.path);
	Reader r{extra.get(), {}};
	auto line = r.line();
	REQUIRE(line.has_value());
	json j = json::parse(*line);
	CHECK(j["ok"] == false);
	CHECK(j["error"].get<std::string>().find("3 connections open") != std::string::npos);
	CHECK(r.closed_without_more());
	// One closes; the server sees it and the next client is served (poll until it is: the
	// close and the connect race, never more than a few tries).
	held.pop_back();
	bool served = false;
	for (int tries = 0; tries < 1000 && !served; tries++) {
		UniqueFd c = connect_to(ts.path);
		(void)send_all(c.get(),
			       "{\"cmd\":\"again\"}\n");  // a refused one may be closed already
		Reader rc{c.get(), {}};
		auto l2 = rc.line();
		REQUIRE(l2.has_value());
		served = json::parse(*l2)["ok"] == true;
	}
	CHECK(served);
}

TEST_CASE("control socket: admission keeps slots for root and caps each other uid")
{
	ControlLimits l;
	l.max_connections = 10;
	l.reserved_for_root = 2;
	l.max_per_uid = 4;
	// Root: only the total limit.
	CHECK(admission_refusal(l, 0, 9, 9).empty());
	CHECK(admission_refusal(l, 0, 10, 0).find("10 connections open, its limit") !=
	      std::string::npos);
	// Another uid: its own cap, then the slots kept for root.
	CHECK(admission_refusal(l, 1000, 3, 3).empty());
	CHECK(admission_refusal(l, 1000, 4, 4)
		      .rfind("uid 1000 has 4 connections open to kvfdpd, the most one user may hold",
			     0) == 0);
	CHECK(admission_refusal(l, 1001, 7, 0).empty());
	CHECK(admission_refusal(l, 1001, 8, 0).find("the other 2 are kept for root") !=
	      std::string::npos);
	CHECK(admission_refusal(l, 1001, 10, 0).find("its limit") != std::string::npos);
	// Every refusal is one line that says what to do.
	for (const auto &m : {admission_refusal(l, 0, 10, 10), admission_refusal(l, 5, 1, 4),
			      admission_refusal(l, 5, 8, 1)}) {
		CHECK(m.find('\n') == std::string::npos);
		CHECK((m.find("retry") != std::string::npos ||
		       m.find("close idle ones") != std::string::npos));
	}
}

TEST_CASE("control socket: listen refuses a path that is too long, not a socket, or served")
{
	TempDir d;
	// Too long for sun_path.
	auto longp = ControlServer::listen(d.path + "/" + std::string(120, 's'),
					   [](std::string_view) { return std::string(); });
	REQUIRE_FALSE(longp.ok());
	CHECK(longp.error().message().find("longer than 107 bytes: pass a shorter --socket") !=
	      std::string::npos);
	// A regular file is left alone.
	const std::string file = d.path + "/file.sock";
	write_file(file, "keep");
	auto reg = ControlServer::listen(file, [](std::string_view) { return std::string(); });
	REQUIRE_FALSE(reg.ok());
	CHECK(reg.error().message() ==
	      file + " exists and is not a socket; remove it or pass --socket");
	struct stat st {};
	REQUIRE(::stat(file.c_str(), &st) == 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK(st.st_size == 4);
	// A live server's socket is not taken over; a stale one (no listener) is replaced.
	TestServer live(long_timeouts());
	auto second =
		ControlServer::listen(live.path, [](std::string_view) { return std::string(); });
	REQUIRE_FALSE(second.ok());
	CHECK(second.error().message().find("is served by a running kvfdpd") != std::string::npos);
	UniqueFd c = connect_to(live.path);
	CHECK(ask(c.get(), "{\"cmd\":\"still\"}")["ok"] == true);
	const std::string stale = d.path + "/stale.sock";
	(void)bind_unix_socket(
		stale);  // closed at once, the file stays: what a killed daemon leaves
	auto replaced = ControlServer::listen(stale, [](std::string_view) {
		return reply_ok(json{{"x", 1}});
	});
	REQUIRE_MESSAGE(replaced.ok(), replaced.error().message());
	auto loop = EventLoop::create();
	REQUIRE(loop.ok());
	(*replaced)->start(**loop);
	(*loop)->start();  // destroyed before the server: it detaches it
	UniqueFd sc = connect_to(stale);
	CHECK(ask(sc.get(), "{\"cmd\":\"status\"}")["data"]["x"] == 1);
}

TEST_CASE(
	"control socket: a reply over max_reply is one error line instead; the connection stays usable")
{
	ControlLimits l = long_timeouts();
	l.max_reply = 1000;
	TestServer ts(l, 5000);
	UniqueFd c = connect_to(ts.path);
	const std::string want_size = std::to_string(reply_ok(std::string(5000, 'x')).size());
	const json big = ask(c.get(), R"({"cmd":"big"})");
	CHECK(big["ok"] == false);
	CHECK(big.value("error", std::string()) ==
	      "the reply to 'big' would be " + want_size +
		      " bytes, over the control socket's bound of 1000 bytes per reply: ask for less "
		      "(docs/control.md, Limits), or report it as a kvfdpd bug");
	CHECK(ask(c.get(), R"({"cmd":"small"})")["data"]["cmd"] == "small");
}
