// ControlServer: accept (reading the peer's credentials), read lines, answer, enforce the
// limits and who may send what.
#include "kvfdpd/daemon/ctl/control_server.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <grp.h>
#include <map>
#include <string>
#include <vector>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.hpp"
#include "kvfdpd/daemon/ctl/control_proto.hpp"

namespace kvfdp::daemon {

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kUnknownUid = UINT32_MAX;

struct Conn {
	UniqueFd fd;
	Peer peer;  // its uid counts against max_per_uid
	LineBuffer in;
	std::string out;  // replies; out[0, sent) is sent already
	size_t sent = 0;
	Clock::time_point last_progress;  // accepted, or the last byte received or sent
	bool closing = false;             // close once what is answered is sent
	// Reply bytes not yet sent.
	[[nodiscard]] size_t queued() const { return out.size() - sent; }
	// n more bytes sent; the sent prefix is dropped once it is half the buffer (amortised:
	// a large reply is not moved per send).
	void consume(size_t n)
	{
		sent += n;
		if (sent == out.size()) {
			out.clear();
			sent = 0;
		} else if (sent * 2 >= out.size()) {
			out.erase(0, sent);
			sent = 0;
		}
	}
};

// The supplementary groups of fd's peer as they were at its connect() (SO_PEERGROUPS, Linux
// 4.13+; empty before, where only the primary gid counts).
std::vector<uint32_t> peer_groups(int fd)
{
	std::vector<uint32_t> groups(64);
	for (int tries = 0; tries < 2; tries++) {
		socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
		if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
			groups.resize(len / sizeof(gid_t));
			return groups;
		}
		if (errno != ERANGE)
			break;
		groups.resize(len / sizeof(gid_t));  // len: the size needed
	}
	return {};
}

// fd's peer: its uid (kUnknownUid when unreadable) and whether it is an admin.
Peer peer_of(int fd, std::optional<uint32_t> admin_gid)
{
	static_assert(sizeof(gid_t) == sizeof(uint32_t));
	ucred cr{};
	socklen_t len = sizeof(cr);
	if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return Peer{kUnknownUid, false};
	const bool primary = cr.uid == 0 || (admin_gid && cr.gid == *admin_gid);
	const std::vector<uint32_t> groups =
		primary || !admin_gid ? std::vector<uint32_t>{} : peer_groups(fd);
	return Peer{cr.uid, is_admin(cr.uid, cr.gid, groups, admin_gid)};
}

// Why the reply to line, of bytes, is not sent (max: the bound).
std::string oversized(std::string_view line, size_t bytes, size_t max)
{
	Request req;
	std::string err;
	const std::string cmd = parse_request(line, req, err) ? req.cmd.substr(0, 64) : "?";
	return "the reply to '" + cmd + "' would be " + std::to_string(bytes) +
	       " bytes, over the control socket's bound of " + std::to_string(max) +
	       " bytes per reply: ask for less (docs/control.md, Limits), or report it as a kvfdpd bug";
}

// The admin group's gid: limits' own, else proto::kAdminGroup's where it exists.
std::optional<uint32_t> admin_gid_of(const ControlLimits &l)
{
	if (l.admin_gid)
		return l.admin_gid;
	if (const group *g = getgrnam(proto::kAdminGroup))
		return static_cast<uint32_t>(g->gr_gid);
	return std::nullopt;
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
			(void)!::chown(dir.c_str(), 0, g->gr_gid);
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

// One ControlServer's state on the loop: the listening socket, the connections, their
// per-uid counts, and what happens on each event (admit, receive, answer, flush, close) and
// on each tick (close the stale).
class ControlSource final : public EventSource {
public:
	ControlSource(UniqueFd listen_fd, ControlServer::Handler handler, ControlLimits lim)
	    : listen_fd_(std::move(listen_fd)), handler_(std::move(handler)), lim_(std::move(lim)),
	      admin_gid_(admin_gid_of(lim_))
	{
	}
	[[nodiscard]] int listen_fd() const { return listen_fd_.get(); }

protected:
	void on_attach(EventLoop &loop) override
	{
		if (!loop.watch(listen_fd_.get(), EPOLLIN, *this))
			log::error("control socket: epoll_ctl: %s", strerror(errno));
	}
	void on_ready(int fd, uint32_t events) override
	{
		if (fd == listen_fd_.get())
			admit(now());
		else
			on_event(fd, events, now());
	}
	std::chrono::milliseconds on_tick() override
	{
		close_stale(now());
		return std::chrono::milliseconds(tick_ms(lim_));
	}
	void on_detach() override
	{
		conns_.clear();
		by_uid_.clear();
	}

private:
	using ConnMap = std::map<int, Conn>;

	Clock::time_point now() const { return lim_.now ? lim_.now() : Clock::now(); }

	ConnMap::iterator close_conn(ConnMap::iterator it)
	{
		loop()->unwatch(it->first);
		if (auto u = by_uid_.find(it->second.peer.uid);
		    u != by_uid_.end() && --u->second == 0)
			by_uid_.erase(u);
		return conns_.erase(it);
	}

	// Requests are read only while the replies not yet read stay under max_queued_reply.
	void want(Conn &c)
	{
		uint32_t events = 0;
		if (c.queued() > 0)
			events |= EPOLLOUT;
		if (!c.closing && c.queued() < lim_.max_queued_reply)
			events |= EPOLLIN | EPOLLRDHUP;
		loop()->rewatch(c.fd.get(), events);
	}

	// The handler's reply, or the refusal of a request peer may not send (the handler never
	// sees it), or of a reply over max_reply. An admin's line is parsed once, by
	// the handler.
	std::string answer(std::string_view line, const Peer &peer)
	{
		try {
			Request req;
			std::string err;
			if (!peer.admin && parse_request(line, req, err))
				if (const std::string why = access_refusal(req.cmd, peer);
				    !why.empty())
					return reply_error(why);
			std::string reply = handler_(line);
			if (reply.size() > lim_.max_reply)
				return reply_error(oversized(line, reply.size(), lim_.max_reply));
			return reply;
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
		while (c.queued() < lim_.max_queued_reply && c.in.next_line(line)) {
			c.out += answer(line, c.peer);
			n++;
		}
		return n;
	}

	// Sends what it can; false when the connection failed.
	static bool flush(Conn &c, Clock::time_point now)
	{
		while (c.queued() > 0) {
			const ssize_t n = ::send(c.fd.get(), c.out.data() + c.sent, c.queued(),
						 MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0)
				return errno == EAGAIN || errno == EINTR;
			c.consume(static_cast<size_t>(n));
			c.last_progress = now;
		}
		return true;
	}

	// Reads what the client sent (bounded by the line and reply limits); false on failure.
	bool receive(Conn &c, Clock::time_point now)
	{
		char buf[16384];
		while (!c.closing && c.queued() < lim_.max_queued_reply) {
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
			if (!fits || (c.queued() < lim_.max_queued_reply &&
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
			UniqueFd cfd(::accept4(listen_fd_.get(), nullptr, nullptr,
					       SOCK_NONBLOCK | SOCK_CLOEXEC));
			if (!cfd) {
				if (errno == EINTR || errno == ECONNABORTED)
					continue;
				return;
			}
			const Peer peer = peer_of(cfd.get(), admin_gid_);
			const auto u = by_uid_.find(peer.uid);
			const std::string why = admission_refusal(
				lim_, peer.uid, conns_.size(), u == by_uid_.end() ? 0 : u->second);
			if (!why.empty()) {
				// One line in the client's receive queue (read before it sees the close).
				const std::string line = reply_error(why);
				(void)!::send(cfd.get(), line.data(), line.size(),
					      MSG_NOSIGNAL | MSG_DONTWAIT);
				continue;
			}
			const int fd = cfd.get();
			if (!loop()->watch(fd, EPOLLIN | EPOLLRDHUP, *this))
				continue;
			Conn &c = conns_[fd];
			c.fd = std::move(cfd);
			c.peer = peer;
			c.last_progress = now;
			by_uid_[peer.uid]++;
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
			if (!keep || c.queued() > 0 || serve_lines(c) == 0)
				break;
		}
		if (!keep || (c.closing && c.queued() == 0)) {
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
			const bool stale = c.queued() > 0 ? quiet > lim_.unread_reply_timeout
					   : c.in.pending() > 0
						   ? quiet > lim_.incomplete_line_timeout
						   : quiet > lim_.idle_timeout;
			it = stale ? close_conn(it) : std::next(it);
		}
	}

	UniqueFd listen_fd_;
	const ControlServer::Handler handler_;
	const ControlLimits lim_;
	const std::optional<uint32_t> admin_gid_;  // admin_gid_of(lim_), once
	const std::string too_long_ =
		"request line exceeds " + std::to_string(kMaxRequestLine) + " bytes";
	ConnMap conns_;
	std::map<uint32_t, size_t> by_uid_;  // open connections per peer uid
};

ControlServer::ControlServer(std::string path, UniqueFd listen_fd, Handler handler,
			     ControlLimits limits)
    : path_(std::move(path)), source_(std::make_unique<ControlSource>(
				      std::move(listen_fd), std::move(handler), std::move(limits)))
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
	auto server = std::unique_ptr<ControlServer>(
		new ControlServer(path, std::move(fd), std::move(handler), std::move(limits)));
	if (group *g = getgrnam("kvfdp"))
		(void)!::chown(path.c_str(), 0, g->gr_gid);
	if (::chmod(path.c_str(), 0660) < 0)
		return errno_error(errno, "chmod " + path);
	if (::listen(server->source_->listen_fd(), 64) < 0)
		return errno_error(errno, "listen " + path);
	return server;
}

void ControlServer::start(EventLoop &loop)
{
	loop.attach(*source_);
}

void ControlServer::stop()
{
	if (EventLoop *loop = source_->loop())
		loop->detach(*source_);
}

}  // namespace kvfdp::daemon
