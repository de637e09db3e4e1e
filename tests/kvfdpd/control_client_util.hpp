// Real-socket helpers for the control server tests: a server on a temporary path with a
// clock the test moves, and a blocking client that reads lines with a bound that only a
// hang reaches (never a timing assertion).
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/unique_fd.hpp"
#include "kvfdpd/daemon/ctl/control_proto.hpp"
#include "kvfdpd/daemon/ctl/control_server.hpp"
#include "tests/support/temp_files.hpp"

namespace kvfdp::test {

// Reaching it means the server hung: the test fails then, it never waits this long otherwise.
inline constexpr int kHangMs = 30000;

// A ControlServer answering {"ok":true,"data":{"cmd":CMD,"n":N}} (N counts requests), and
// {"cmd":"big"} with a data string of big_bytes when given, on a clock that is steady_clock plus
// what advance() added.
struct TestServer {
	TempDir dir;
	std::string path = dir.path + "/kvfdpd.sock";
	std::shared_ptr<std::atomic<long long>> offset_ms =
		std::make_shared<std::atomic<long long>>(0);
	std::shared_ptr<std::atomic<unsigned>> served = std::make_shared<std::atomic<unsigned>>(0);
	std::unique_ptr<daemon::EventLoop> loop;  // the server's, started
	std::unique_ptr<daemon::ControlServer> server;

	explicit TestServer(daemon::ControlLimits limits, size_t big_bytes = 0)
	{
		auto off = offset_ms;
		limits.now = [off] {
			return std::chrono::steady_clock::now() +
			       std::chrono::milliseconds(off->load());
		};
		auto n = served;
		auto s = daemon::ControlServer::listen(
			path,
			[n, big_bytes](std::string_view line) {
				daemon::Request r;
				std::string err;
				if (!daemon::parse_request(line, r, err))
					return daemon::reply_error(err);
				if (big_bytes && r.cmd == "big")
					return daemon::reply_ok(std::string(big_bytes, 'x'));
				return daemon::reply_ok(
					nlohmann::json{{"cmd", r.cmd}, {"n", (*n)++}});
			},
			std::move(limits));
		REQUIRE_MESSAGE(s.ok(), s.error().message());
		server = std::move(*s);
		auto l = daemon::EventLoop::create();
		REQUIRE_MESSAGE(l.ok(), l.error().message());
		loop = std::move(*l);
		server->start(*loop);
		loop->start();
	}
	// Moves the server's clock forward: its next check (at most a quarter of the shortest
	// timeout later) sees the time passed.
	void advance(std::chrono::milliseconds d) { offset_ms->fetch_add(d.count()); }

	// Moves the clock on, step by step, until the server has closed fd (seen without reading
	// from it: reading is progress). False only when the server hangs.
	bool advance_until_closed(int fd, std::chrono::milliseconds step)
	{
		const auto end =
			std::chrono::steady_clock::now() + std::chrono::milliseconds(kHangMs);
		while (std::chrono::steady_clock::now() < end) {
			advance(step);
			pollfd p{fd, POLLRDHUP, 0};
			if (::poll(&p, 1, 50) == 1 && (p.revents & (POLLHUP | POLLRDHUP)))
				return true;
		}
		return false;
	}
};

inline UniqueFd connect_to(const std::string &path)
{
	UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	REQUIRE(fd);
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
	REQUIRE_MESSAGE(::connect(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0,
			"connect " << path << ": " << std::strerror(errno));
	return fd;
}

inline bool send_all(int fd, const std::string &s)
{
	size_t off = 0;
	while (off < s.size()) {
		const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		off += static_cast<size_t>(n);
	}
	return true;
}

// What a client reads from the server: lines, then how the stream ended.
struct Reader {
	int fd;
	std::string buf;
	bool eof = false;

	// The next line (without '\n'), or nullopt at EOF / a reset. FAILs on a hang.
	std::optional<std::string> line()
	{
		for (;;) {
			const size_t nl = buf.find('\n');
			if (nl != std::string::npos) {
				std::string l = buf.substr(0, nl);
				buf.erase(0, nl + 1);
				return l;
			}
			if (eof)
				return std::nullopt;
			pollfd p{fd, POLLIN, 0};
			const int r = ::poll(&p, 1, kHangMs);
			if (r < 0 && errno == EINTR)
				continue;
			REQUIRE_MESSAGE(
				r == 1,
				"the server neither answered nor closed the connection (hung?)");
			char b[65536];
			const ssize_t n = ::recv(fd, b, sizeof(b), 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				eof = true;  // 0, or ECONNRESET: the server closed
				continue;
			}
			buf.append(b, static_cast<size_t>(n));
		}
	}
	// True once the server has closed the connection with nothing more sent.
	bool closed_without_more() { return !line().has_value() && buf.empty(); }
};

// One request, its reply parsed.
inline nlohmann::json ask(int fd, const std::string &request_line)
{
	REQUIRE(send_all(fd, request_line + "\n"));
	Reader r{fd, {}};
	auto l = r.line();
	REQUIRE_MESSAGE(l.has_value(), "no reply to " << request_line);
	auto j = nlohmann::json::parse(*l, nullptr, false);
	REQUIRE_MESSAGE(j.is_object(), *l);
	return j;
}

}  // namespace kvfdp::test
