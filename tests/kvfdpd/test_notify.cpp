// kvfdpd's service-manager notifications: the sd_notify datagrams reach $NOTIFY_SOCKET (a
// socket this test owns, no systemd needed) with READY / RELOADING / STOPPING as sent.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/unique_fd.hpp"
#include "kvfdpd/daemon/ctl/notify.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;

namespace {

// A datagram socket bound at name (path, or '@...' abstract), as systemd listens.
struct Listener {
	UniqueFd fd;
	explicit Listener(const std::string &name)
	{
		fd = UniqueFd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
		REQUIRE(fd.get() >= 0);
		sockaddr_un sa{};
		sa.sun_family = AF_UNIX;
		name.copy(sa.sun_path, sizeof(sa.sun_path) - 1);
		if (name[0] == '@')
			sa.sun_path[0] = '\0';
		if (name[0] == '/')
			::unlink(name.c_str());
		const socklen_t len =
			static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
		REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr *>(&sa), len) == 0);
	}
	// The next datagram; never blocks (notify() has already sent it).
	std::string next()
	{
		char buf[4096];
		const ssize_t n = ::recv(fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
		return n < 0 ? std::string("<none: ") + std::to_string(errno) + ">"
			     : std::string(buf, static_cast<size_t>(n));
	}
};

}  // namespace

TEST_CASE("notify: READY, RELOADING and STOPPING reach a path NOTIFY_SOCKET in order")
{
	const std::string path = "/tmp/kvfdp-test-notify-" + std::to_string(getpid());
	Listener l(path);
	REQUIRE(::setenv("NOTIFY_SOCKET", path.c_str(), 1) == 0);
	CHECK(notify(ready_message("serving /dev/ublkb0")) == 1);
	CHECK(notify(reloading_message(123456789)) == 1);
	CHECK(notify(stopping_message("draining and removing /dev/ublkb0")) == 1);
	CHECK(l.next() == "READY=1\nSTATUS=serving /dev/ublkb0");
	CHECK(l.next() == "RELOADING=1\nMONOTONIC_USEC=123456789");
	CHECK(l.next() == "STOPPING=1\nSTATUS=draining and removing /dev/ublkb0");
	::unsetenv("NOTIFY_SOCKET");
	::unlink(path.c_str());
}

TEST_CASE("notify: an abstract '@' socket works too")
{
	const std::string name = "@kvfdp-test-notify-" + std::to_string(getpid());
	Listener l(name);
	REQUIRE(::setenv("NOTIFY_SOCKET", name.c_str(), 1) == 0);
	CHECK(notify("READY=1") == 1);
	CHECK(l.next() == "READY=1");
	::unsetenv("NOTIFY_SOCKET");
}

TEST_CASE("notify: without a service manager nothing is sent; a bad address is an error")
{
	::unsetenv("NOTIFY_SOCKET");
	CHECK(notify("READY=1") == 0);
	REQUIRE(::setenv("NOTIFY_SOCKET", "relative/path", 1) == 0);
	CHECK(notify("READY=1") == -EINVAL);
	REQUIRE(::setenv("NOTIFY_SOCKET", "/nonexistent-dir-kvfdp/notify", 1) == 0);
	CHECK(notify("READY=1") < 0);
	::unsetenv("NOTIFY_SOCKET");
}

TEST_CASE("notify: MONOTONIC_USEC is CLOCK_MONOTONIC in microseconds")
{
	const uint64_t a = monotonic_usec();
	const uint64_t b = monotonic_usec();
	CHECK(a > 0);
	CHECK(b >= a);
	CHECK(reloading_message(a).find("MONOTONIC_USEC=" + std::to_string(a)) !=
	      std::string::npos);
}
