// ControlServer: accept, read lines, answer, enforce the limits.
#include "userspace/daemon/ctl/control_server.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <grp.h>
#include <map>
#include <string>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.hpp"
#include "userspace/daemon/ctl/control_proto.hpp"

namespace kvfdp::daemon {

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kUnknownUid = UINT32_MAX;

struct Conn {
	UniqueFd fd;
	uint32_t uid = kUnknownUid;
	LineBuffer in;
	std::string out;
	Clock::time_point last_progress;  // accepted, or the last byte received or sent
	bool closing = false;             // close once what is answered is sent
};

uint32_t peer_uid(int fd)
{
	ucred cr{};
	socklen_t len = sizeof(cr);
	if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return kUnknownUid;
	return cr.uid;
}

std::string seconds(std::chrono::milliseconds ms)
{
	char b[32];
	std::snprintf(b, sizeof(b), "%g s", static_cast<double>(ms.count()) / 1000.0);
	return b;
}

// How often the timeouts are checked: a quarter of the shortest, between 10 ms and 1 s.
int tick_ms(const ControlLimits &l)
{
	const auto shortest =
		std::min({l.idle_timeout, l.incomplete_line_timeout, l.unread_reply_timeout});
	return static_cast<int>(std::clamp<long long>(shortest.count() / 4, 10, 1000));
}

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

}  // namespace

std::string admission_refusal(const ControlLimits &l, uint32_t uid, size_t open_total,
			      size_t open_by_uid)
{
	const std::string idle =
		" (an idle connection is closed after " + seconds(l.idle_timeout) + ")";
	if (open_total >= l.max_connections)
		return "kvfdpd's control socket has " + std::to_string(open_total) +
		       " connections open, its limit: retry in a few seconds" + idle;
	if (uid == 0)
		return "";
	const std::string who = uid == kUnknownUid ? std::string("a client of unknown uid")
						   : "uid " + std::to_string(uid);
	if (open_by_uid >= l.max_per_uid)
		return who + " has " + std::to_string(open_by_uid) +
		       " connections open to kvfdpd, the most one user may hold: close idle ones" +
		       idle;
	const size_t shared = l.max_connections > l.reserved_for_root
				      ? l.max_connections - l.reserved_for_root
				      : 0;
	if (open_total >= shared)
		return "kvfdpd's control socket has " + std::to_string(open_total) +
		       " connections open; the other " +
		       std::to_string(l.max_connections - open_total) +
		       " are kept for root: retry in a few seconds" + idle;
	return "";
}

ControlServer::ControlServer(std::string path, UniqueFd listen_fd, UniqueFd epoll_fd,
			     UniqueFd wake_fd, Handler handler, ControlLimits limits)
    : path_(std::move(path)), listen_fd_(std::move(listen_fd)), epoll_fd_(std::move(epoll_fd)),
      wake_fd_(std::move(wake_fd)), handler_(std::move(handler)), limits_(limits)
{
}

ControlServer::~ControlServer()
{
	stop();
	if (!path_.empty())
		::unlink(path_.c_str());
}

Result<std::unique_ptr<ControlServer>> ControlServer::listen(const std::string &path,
							     Handler handler, ControlLimits limits)
{
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	if (path.empty() || path.size() >= sizeof(addr.sun_path))
		return guidance_error(std::errc::filename_too_long,
				      "control socket path '" + path +
					      "' is empty or longer than " +
					      std::to_string(sizeof(addr.sun_path) - 1) +
					      " bytes: pass a shorter --socket");
	std::memcpy(addr.sun_path, path.c_str(), path.size());
	// A socket left by a killed daemon: replace it, but never a live one.
	struct stat st {};
	if (::lstat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode))
		return guidance_error(
			std::errc::file_exists,
			path + " exists and is not a socket; remove it or pass --socket");
	mkdir_parent(path);
	UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (!fd)
		return errno_error(errno, "socket(AF_UNIX)");
	if (::lstat(path.c_str(), &st) == 0) {
		UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
		if (probe &&
		    ::connect(probe.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0)
			return guidance_error(
				std::errc::address_in_use,
				path + " is served by a running kvfdpd; stop it or pass --socket");
		::unlink(path.c_str());
	}
	if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0)
		return errno_error(errno, "binding the control socket " + path +
						  " (pass --socket PATH in a writable directory)");
	// From here the path is ours: the server's destructor removes it.
	auto server = std::unique_ptr<ControlServer>(new ControlServer(
		path, std::move(fd), UniqueFd(), UniqueFd(), std::move(handler), limits));
	if (group *g = getgrnam("kvfdp"))
		(void)::chown(path.c_str(), 0, g->gr_gid);
	if (::chmod(path.c_str(), 0660) < 0)
		return errno_error(errno, "chmod " + path);
	if (::listen(server->listen_fd_.get(), 64) < 0)
		return errno_error(errno, "listen " + path);
	server->epoll_fd_.reset(::epoll_create1(EPOLL_CLOEXEC));
	if (!server->epoll_fd_)
		return errno_error(errno, "epoll_create1");
	server->wake_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!server->wake_fd_)
		return errno_error(errno, "eventfd");
	epoll_event ev{};
	ev.events = EPOLLIN;
	for (int f : {server->listen_fd_.get(), server->wake_fd_.get()}) {
		ev.data.fd = f;
		if (::epoll_ctl(server->epoll_fd_.get(), EPOLL_CTL_ADD, f, &ev) < 0)
			return errno_error(errno, "epoll_ctl");
	}
	return server;
}

void ControlServer::start()
{
	thread_ = std::thread([this] { run(); });
}

void ControlServer::stop()
{
	if (!thread_.joinable())
		return;
	uint64_t one = 1;
	(void)!::write(wake_fd_.get(), &one, sizeof(one));
	thread_.join();
}

namespace {

// One run of the server thread: the connections, their per-uid counts, and what happens on
// each event (admit, receive, answer, flush, close) and on each tick (close the stale).
class ServeLoop {
public:
	ServeLoop(int epoll_fd, int listen_fd, int wake_fd, const ControlServer::Handler &handler,
		  const ControlLimits &lim)
	    : epoll_fd_(epoll_fd), listen_fd_(listen_fd), wake_fd_(wake_fd), handler_(handler),
	      lim_(lim)
	{
	}

	// Until the wake fd fires (stop) or epoll fails.
	void run()
	{
		epoll_event events[32];
		const int tick = tick_ms(lim_);
		for (;;) {
			const int n = ::epoll_wait(epoll_fd_, events, 32, tick);
			if (n < 0 && errno != EINTR) {
				log::error("control socket: epoll_wait: %s", strerror(errno));
				return;
			}
			const auto now = lim_.now ? lim_.now() : Clock::now();
			for (int i = 0; i < n; i++) {
				const int fd = events[i].data.fd;
				if (fd == wake_fd_)
					return;
				if (fd == listen_fd_)
					admit(now);
				else
					on_event(fd, events[i].events, now);
			}
			close_stale(now);
		}
	}

private:
	using ConnMap = std::map<int, Conn>;

	ConnMap::iterator close_conn(ConnMap::iterator it)
	{
		::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->first, nullptr);
		if (auto u = by_uid_.find(it->second.uid); u != by_uid_.end() && --u->second == 0)
			by_uid_.erase(u);
		return conns_.erase(it);
	}

	// Requests are read only while the replies not yet read stay under max_queued_reply.
	void want(Conn &c)
	{
		epoll_event ev{};
		if (!c.out.empty())
			ev.events |= EPOLLOUT;
		if (!c.closing && c.out.size() < lim_.max_queued_reply)
			ev.events |= EPOLLIN | EPOLLRDHUP;
		ev.data.fd = c.fd.get();
		::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd.get(), &ev);
	}

	std::string answer(std::string_view line)
	{
		try {
			return handler_(line);
		} catch (const std::exception &e) {
			return reply_error(std::string("internal error: ") + e.what());
		} catch (...) {
			return reply_error("internal error");
		}
	}

	// Answers complete lines while the queued replies stay under the limit; how many.
	size_t serve_lines(Conn &c)
	{
		size_t n = 0;
		std::string line;
		while (c.out.size() < lim_.max_queued_reply && c.in.next_line(line)) {
			c.out += answer(line);
			n++;
		}
		return n;
	}

	// Sends what it can; false when the connection failed.
	static bool flush(Conn &c, Clock::time_point now)
	{
		while (!c.out.empty()) {
			const ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(),
						 MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0)
				return errno == EAGAIN || errno == EINTR;
			c.out.erase(0, static_cast<size_t>(n));
			c.last_progress = now;
		}
		return true;
	}

	// Reads what the client sent (bounded by the line and reply limits); false on failure.
	bool receive(Conn &c, Clock::time_point now)
	{
		char buf[16384];
		while (!c.closing && c.out.size() < lim_.max_queued_reply) {
			const ssize_t r = ::recv(c.fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
			if (r == 0) {
				c.closing = true;  // answer what is complete, then close
				break;
			}
			if (r < 0)
				return errno == EAGAIN || errno == EINTR;
			c.last_progress = now;
			const bool fits =
				c.in.append(std::string_view(buf, static_cast<size_t>(r)));
			serve_lines(c);  // lines before an oversized one still get their answers
			if (!fits || (c.out.size() < lim_.max_queued_reply &&
				      c.in.pending() > kMaxRequestLine)) {
				c.out += reply_error(too_long_);
				c.closing = true;
			}
		}
		return true;
	}

	// Accepts every pending connection; one over a limit gets its refusal line and is closed.
	void admit(Clock::time_point now)
	{
		for (;;) {
			UniqueFd cfd(::accept4(listen_fd_, nullptr, nullptr,
					       SOCK_NONBLOCK | SOCK_CLOEXEC));
			if (!cfd) {
				if (errno == EINTR || errno == ECONNABORTED)
					continue;
				return;
			}
			const uint32_t uid = peer_uid(cfd.get());
			const auto u = by_uid_.find(uid);
			const std::string why = admission_refusal(
				lim_, uid, conns_.size(), u == by_uid_.end() ? 0 : u->second);
			if (!why.empty()) {
				// One line in the client's receive queue (read before it sees the close).
				const std::string line = reply_error(why);
				(void)!::send(cfd.get(), line.data(), line.size(),
					      MSG_NOSIGNAL | MSG_DONTWAIT);
				continue;
			}
			const int fd = cfd.get();
			epoll_event ev{};
			ev.events = EPOLLIN | EPOLLRDHUP;
			ev.data.fd = fd;
			if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0)
				continue;
			Conn &c = conns_[fd];
			c.fd = std::move(cfd);
			c.uid = uid;
			c.last_progress = now;
			by_uid_[uid]++;
		}
	}

	// A client's socket is ready: read and answer, send, then close or re-arm it.
	void on_event(int fd, uint32_t events, Clock::time_point now)
	{
		auto it = conns_.find(fd);
		if (it == conns_.end())
			return;
		Conn &c = it->second;
		bool keep = true;
		if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			keep = receive(c, now);
		// Send, then answer lines held back while the replies were over the limit.
		while (keep) {
			keep = flush(c, now);
			if (!keep || !c.out.empty() || serve_lines(c) == 0)
				break;
		}
		if (!keep || (c.closing && c.out.empty())) {
			close_conn(it);
			return;
		}
		want(c);
	}

	// Connections that make no progress: idle, a line left incomplete, replies unread.
	void close_stale(Clock::time_point now)
	{
		for (auto it = conns_.begin(); it != conns_.end();) {
			const Conn &c = it->second;
			const auto quiet = now - c.last_progress;
			const bool stale = !c.out.empty() ? quiet > lim_.unread_reply_timeout
					   : c.in.pending() > 0
						   ? quiet > lim_.incomplete_line_timeout
						   : quiet > lim_.idle_timeout;
			it = stale ? close_conn(it) : std::next(it);
		}
	}

	const int epoll_fd_, listen_fd_, wake_fd_;
	const ControlServer::Handler &handler_;
	const ControlLimits &lim_;
	const std::string too_long_ =
		"request line exceeds " + std::to_string(kMaxRequestLine) + " bytes";
	ConnMap conns_;
	std::map<uint32_t, size_t> by_uid_;  // open connections per peer uid
};

}  // namespace

void ControlServer::run()
{
	ServeLoop(epoll_fd_.get(), listen_fd_.get(), wake_fd_.get(), handler_, limits_).run();
}

}  // namespace kvfdp::daemon
