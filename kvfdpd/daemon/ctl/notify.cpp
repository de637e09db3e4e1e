// sd_notify datagrams to $NOTIFY_SOCKET.
#include "kvfdpd/daemon/ctl/notify.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/log.hpp"
#include "common/unique_fd.hpp"

namespace kvfdp::daemon {

int notify(const std::string &msg)
{
	const char *env = std::getenv("NOTIFY_SOCKET");
	if (!env || !*env)
		return 0;
	const size_t len = std::strlen(env);
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	if ((env[0] != '/' && env[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	std::memcpy(sa.sun_path, env, len);
	if (env[0] == '@')
		sa.sun_path[0] = '\0';  // abstract namespace
	UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	if (fd.get() < 0)
		return -errno;
	const socklen_t sl = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
	if (::sendto(fd.get(), msg.data(), msg.size(), MSG_NOSIGNAL,
		     reinterpret_cast<const sockaddr *>(&sa), sl) < 0)
		return -errno;
	return 1;
}

uint64_t monotonic_usec()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000000u +
	       static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

std::string ready_message(const std::string &status)
{
	return "READY=1\nSTATUS=" + status;
}

std::string reloading_message(uint64_t usec)
{
	return "RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec);
}

std::string stopping_message(const std::string &status)
{
	return "STOPPING=1\nSTATUS=" + status;
}

void send_notify(const std::string &msg)
{
	const int r = notify(msg);
	if (r < 0)
		log::warn("notifying the service manager (NOTIFY_SOCKET): %s", std::strerror(-r));
}

}  // namespace kvfdp::daemon
