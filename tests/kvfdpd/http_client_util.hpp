// A blocking loopback HTTP client for the GET /metrics tests: connect, send, read until the
// server closes. The receive time-out only keeps a broken server from hanging a test; no
// assertion depends on it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include <doctest/doctest.h>

#include "common/unique_fd.hpp"

namespace kvfdp::test::http {

inline UniqueFd dial(uint16_t port)
{
	UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	REQUIRE(fd);
	timeval tv{60, 0};
	::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
	return fd;
}

inline void send_all(int fd, const std::string &s)
{
	size_t off = 0;
	while (off < s.size()) {
		ssize_t w = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
		if (w <= 0)
			return;  // the server may close first (an oversize request)
		off += static_cast<size_t>(w);
	}
}

// Everything until the server closes; "TIMEOUT" if it never does.
inline std::string read_all(int fd)
{
	std::string out;
	char buf[65536];
	for (;;) {
		ssize_t r = ::recv(fd, buf, sizeof buf, 0);
		if (r == 0)
			return out;
		if (r < 0)
			return errno == EAGAIN ? "TIMEOUT" : out;
		out.append(buf, static_cast<size_t>(r));
	}
}

inline std::string ask(uint16_t port, const std::string &request)
{
	UniqueFd fd = dial(port);
	send_all(fd.get(), request);
	return read_all(fd.get());
}

inline std::string body_of(const std::string &reply)
{
	size_t p = reply.find("\r\n\r\n");
	return p == std::string::npos ? "" : reply.substr(p + 4);
}

}  // namespace kvfdp::test::http
