// kvfdpd control-socket client: connect, one request line, one reply line.
#include "cli/control_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "common/unique_fd.hpp"
#include "proto/control.hpp"

namespace kvfdp::cli {

namespace {

struct Conn {
	UniqueFd fd;
	int err = 0;
};

Conn connect_to(const std::string &path)
{
	Conn c;
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	if (path.size() >= sizeof addr.sun_path) {
		c.err = ENAMETOOLONG;
		return c;
	}
	std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
	c.fd.reset(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!c.fd) {
		c.err = errno;
		return c;
	}
	if (connect(c.fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
		c.err = errno;
		c.fd.reset();
	}
	return c;
}

DaemonReply fail(DaemonFailure kind, std::string msg)
{
	DaemonReply r;
	r.error = {kind, std::move(msg)};
	return r;
}

// Why connecting failed (err: connect_to's errno), with what to do.
DaemonReply connect_failure(const std::string &path, int err)
{
	std::string why = std::strerror(err);
	if (err == EACCES || err == EPERM)
		return fail(DaemonFailure::denied,
			    "cannot connect to kvfdpd at " + path + ": " + why +
				    "; run as root or as a member of group " + proto::kClientGroup);
	return fail(DaemonFailure::unreachable,
		    "no kvfdpd at " + path + " (" + why +
			    "); is kvfdpd running? try --device /dev/ngXnY or --backend model");
}

// Sends the whole line. False: the send failed (a refused connection: its one-line reason
// may be waiting).
bool send_line(int fd, const std::string &line)
{
	size_t off = 0;
	while (off < line.size()) {
		ssize_t n = send(fd, line.data() + off, line.size() - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		off += static_cast<size_t>(n);
	}
	return true;
}

// Reads the reply's first line into reply (without its '\n'; a final line without one
// counts), within timeout_ms. A failure (timeout, closed, over kMaxReply) is returned.
std::optional<DaemonReply> read_reply_line(int fd, const std::string &path, const std::string &cmd,
					   int timeout_ms, bool send_failed, std::string &reply)
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	char buf[65536];
	for (;;) {
		size_t nl = reply.find('\n');
		if (nl != std::string::npos) {
			reply.resize(nl);
			return std::nullopt;
		}
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0)
			return fail(DaemonFailure::protocol,
				    "kvfdpd at " + path + " did not answer '" + cmd + "' within " +
					    std::to_string(timeout_ms / 1000) +
					    " s; check the daemon's log (journalctl -u kvfdpd)");
		pollfd p{fd, POLLIN, 0};
		int pr = poll(&p, 1, static_cast<int>(left.count()));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		ssize_t n = recv(fd, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!reply.empty())
				return std::nullopt;  // a final line without '\n'
			if (send_failed)
				return fail(
					DaemonFailure::protocol,
					"kvfdpd at " + path +
						" closed the connection while we sent '" + cmd +
						"'; check the daemon's log (journalctl -u kvfdpd)");
			return fail(DaemonFailure::protocol,
				    "kvfdpd at " + path +
					    " closed the connection without answering '" + cmd +
					    "'; check the daemon's log (journalctl -u kvfdpd)");
		}
		reply.append(buf, static_cast<size_t>(n));
		if (reply.size() > proto::kMaxReplyBytes)
			return fail(
				DaemonFailure::protocol,
				"kvfdpd's reply to '" + cmd + "' exceeds " +
					std::to_string(proto::kMaxReplyBytes) +
					" bytes, the most a reply may hold; this is a daemon bug");
	}
}

// The reply line as {"ok":..., "data"|"error":...}: its data, or the daemon's refusal.
DaemonReply parse_reply(const std::string &path, const std::string &cmd, const std::string &reply)
{
	auto j = nlohmann::json::parse(reply, nullptr, false);
	if (j.is_discarded() || !j.is_object() || !j.contains(proto::kOkKey) ||
	    !j[proto::kOkKey].is_boolean())
		return fail(DaemonFailure::protocol,
			    "kvfdpd at " + path + " sent a reply to '" + cmd +
				    "' that is not {\"ok\":...} JSON; is the CLI older or newer "
				    "than the daemon? compare `kvfdp version` with the daemon's");
	if (!j[proto::kOkKey].get<bool>()) {
		std::string e = j.value(proto::kErrorKey, std::string("(no error text)"));
		return fail(DaemonFailure::refused, "kvfdpd refused '" + cmd + "': " + e);
	}
	DaemonReply r;
	r.ok = true;
	r.data = j.contains(proto::kDataKey) ? j[proto::kDataKey] : nlohmann::json::object();
	return r;
}

}  // namespace

bool fetch_twin_window(const std::function<DaemonReply(const proto::TwinWindowRequest &)> &ask,
		       proto::TwinWindow &out, DaemonError &error)
{
	proto::TwinWindowRequest req;  // from: the oldest held
	for (;;) {
		DaemonReply r = ask(req);
		if (!r.ok) {
			error = std::move(r.error);
			return false;
		}
		auto page = r.data.get<proto::TwinWindow>();
		const uint64_t asked = req.from.value_or(page.first);
		if (!req.from) {
			out = std::move(page);
		} else {
			out.dropped += page.first > asked ? page.first - asked : 0;
			out.records.insert(out.records.end(), page.records.begin(),
					   page.records.end());
			out.next = page.next;
		}
		// Done at the first page's newest, or when a page brings nothing new (an empty
		// window, or a kvfdpd that sends the whole window at once: no "next").
		if (out.next >= out.total || out.next <= asked)
			return true;
		req.from = out.next;
	}
}

bool daemon_reachable(const std::string &path)
{
	return connect_to(path).fd.valid();
}

DaemonReply daemon_call(const std::string &path, const std::string &cmd, const nlohmann::json &args,
			int timeout_ms)
{
	Conn c = connect_to(path);
	if (!c.fd)
		return connect_failure(path, c.err);
	nlohmann::json req = args.is_object() ? args : nlohmann::json::object();
	req[proto::kCmdKey] = cmd;
	const bool send_failed = !send_line(c.fd.get(), req.dump() + "\n");
	std::string reply;
	if (auto failed = read_reply_line(c.fd.get(), path, cmd, timeout_ms, send_failed, reply))
		return std::move(*failed);
	return parse_reply(path, cmd, reply);
}

}  // namespace kvfdp::cli
