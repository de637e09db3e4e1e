// ControlServer: accept, read lines, answer, enforce the limits.
#include "userspace/daemon/control_server.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <grp.h>
#include <map>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.hpp"
#include "userspace/daemon/control_proto.hpp"

namespace kvfdp::daemon {

namespace {

constexpr size_t kMaxConnections = 64;
constexpr size_t kMaxQueuedReply = 1 << 20;
constexpr auto kIncompleteLineTimeout = std::chrono::seconds(10);

struct Conn {
	UniqueFd fd;
	LineBuffer in;
	std::string out;
	std::chrono::steady_clock::time_point last_progress;
	bool closing = false;  // close once out is flushed
};

void mkdir_parent(const std::string &path)
{
	const size_t slash = path.rfind('/');
	if (slash == std::string::npos || slash == 0)
		return;
	const std::string dir = path.substr(0, slash);
	if (::mkdir(dir.c_str(), 0755) == 0) {
		if (group *g = getgrnam("kvfdp"))
			(void)::chown(dir.c_str(), 0, g->gr_gid);
	}
}

} // namespace

ControlServer::ControlServer(std::string path, UniqueFd listen_fd, UniqueFd epoll_fd, UniqueFd wake_fd, Handler handler)
	: path_(std::move(path)), listen_fd_(std::move(listen_fd)), epoll_fd_(std::move(epoll_fd)),
	  wake_fd_(std::move(wake_fd)), handler_(std::move(handler))
{
}

ControlServer::~ControlServer()
{
	stop();
	if (!path_.empty())
		::unlink(path_.c_str());
}

Result<std::unique_ptr<ControlServer>> ControlServer::listen(const std::string &path, Handler handler)
{
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	if (path.empty() || path.size() >= sizeof(addr.sun_path))
		return make_error(std::errc::filename_too_long, "control socket path '" + path + "' is empty or too long");
	std::memcpy(addr.sun_path, path.c_str(), path.size());
	mkdir_parent(path);
	UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (!fd)
		return errno_error(errno, "socket(AF_UNIX)");
	// A socket left by a killed daemon: replace it, but never a live one.
	struct stat st{};
	if (::lstat(path.c_str(), &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return guidance_error(std::errc::file_exists, path + " exists and is not a socket; remove it or pass --socket");
		UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
		if (probe && ::connect(probe.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0)
			return guidance_error(std::errc::address_in_use,
					      path + " is served by a running kvfdpd; stop it or pass --socket");
		::unlink(path.c_str());
	}
	if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0)
		return errno_error(errno, "bind " + path);
	if (group *g = getgrnam("kvfdp"))
		(void)::chown(path.c_str(), 0, g->gr_gid);
	if (::chmod(path.c_str(), 0660) < 0)
		return errno_error(errno, "chmod " + path);
	if (::listen(fd.get(), 16) < 0)
		return errno_error(errno, "listen " + path);
	UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
	if (!ep)
		return errno_error(errno, "epoll_create1");
	UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!wake)
		return errno_error(errno, "eventfd");
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.fd = fd.get();
	if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd.get(), &ev) < 0)
		return errno_error(errno, "epoll_ctl");
	ev.data.fd = wake.get();
	if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, wake.get(), &ev) < 0)
		return errno_error(errno, "epoll_ctl");
	return std::unique_ptr<ControlServer>(
		new ControlServer(path, std::move(fd), std::move(ep), std::move(wake), std::move(handler)));
}

void ControlServer::start() { thread_ = std::thread([this] { run(); }); }

void ControlServer::stop()
{
	if (!thread_.joinable())
		return;
	uint64_t one = 1;
	(void)!::write(wake_fd_.get(), &one, sizeof(one));
	thread_.join();
}

void ControlServer::run()
{
	std::map<int, Conn> conns;
	auto close_conn = [&](int fd) {
		::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
		conns.erase(fd);
	};
	auto want = [&](Conn &c) {
		epoll_event ev{};
		const uint32_t out = c.out.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT);
		ev.events = c.closing ? out : (static_cast<uint32_t>(EPOLLIN | EPOLLRDHUP) | out);
		ev.data.fd = c.fd.get();
		::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev);
	};
	// Writes what it can; false when the connection must go.
	auto flush = [&](Conn &c) {
		while (!c.out.empty()) {
			ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				return false;
			}
			c.out.erase(0, static_cast<size_t>(n));
		}
		if (c.out.size() > kMaxQueuedReply)
			return false;
		return !(c.closing && c.out.empty());
	};
	auto answer = [&](std::string_view line) -> std::string {
		try {
			return handler_(line);
		} catch (const std::exception &e) {
			return reply_error(std::string("internal error: ") + e.what());
		} catch (...) {
			return reply_error("internal error");
		}
	};

	epoll_event events[32];
	for (;;) {
		int n = ::epoll_wait(epoll_fd_.get(), events, 32, 1000);
		if (n < 0 && errno != EINTR) {
			log::error("control socket: epoll_wait: %s", strerror(errno));
			return;
		}
		const auto now = std::chrono::steady_clock::now();
		for (int i = 0; i < n; i++) {
			const int fd = events[i].data.fd;
			if (fd == wake_fd_.get())
				return;
			if (fd == listen_fd_.get()) {
				for (;;) {
					int cfd = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
					if (cfd < 0)
						break;
					if (conns.size() >= kMaxConnections) {
						::close(cfd);
						continue;
					}
					Conn &c = conns[cfd];
					c.fd.reset(cfd);
					c.last_progress = now;
					epoll_event ev{};
					ev.events = EPOLLIN | EPOLLRDHUP;
					ev.data.fd = cfd;
					::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, cfd, &ev);
				}
				continue;
			}
			auto it = conns.find(fd);
			if (it == conns.end())
				continue;
			Conn &c = it->second;
			bool keep = true;
			if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
				char buf[16384];
				for (;;) {
					ssize_t r = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
					if (r == 0) {
						c.closing = true;  // answer what is complete, then close
						break;
					}
					if (r < 0) {
						if (errno != EAGAIN && errno != EINTR)
							keep = false;
						break;
					}
					c.last_progress = now;
					if (!c.in.append(std::string_view(buf, static_cast<size_t>(r)))) {
						// Lines before the oversized one still get their answers.
						std::string line;
						while (c.in.next_line(line))
							c.out += answer(line);
						c.out += reply_error("request line exceeds " + std::to_string(kMaxRequestLine) + " bytes");
						c.closing = true;
						break;
					}
					std::string line;
					while (c.in.next_line(line))
						c.out += answer(line);
					if (c.in.pending() > kMaxRequestLine) {
						c.out += reply_error("request line exceeds " + std::to_string(kMaxRequestLine) + " bytes");
						c.closing = true;
						break;
					}
					if (c.out.size() > kMaxQueuedReply)
						break;
				}
			}
			if (keep)
				keep = flush(c);
			if (!keep) {
				close_conn(fd);
				continue;
			}
			want(c);
		}
		// Slow clients: an incomplete line that makes no progress.
		for (auto it = conns.begin(); it != conns.end();) {
			Conn &c = it->second;
			const bool stalled_in = c.in.pending() > 0 && now - c.last_progress > kIncompleteLineTimeout;
			const bool stalled_out = !c.out.empty() && now - c.last_progress > 3 * kIncompleteLineTimeout;
			if (stalled_in || stalled_out) {
				::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, it->first, nullptr);
				it = conns.erase(it);
			} else {
				++it;
			}
		}
	}
}

} // namespace kvfdp::daemon
