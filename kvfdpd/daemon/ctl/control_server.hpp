// ControlServer: the Unix socket (JSON lines), served on kvfdpd's control-plane event loop
// (event_loop.hpp, shared with GET /metrics), off the I/O queues. Its limits (ControlLimits)
// keep any one client, or user, from locking the others out: idle connections are closed, each
// non-root uid may hold a few connections, and some are kept for root, so `kvfdp status` as
// root always gets in. It checks each peer's credentials at accept: only root and the admin
// group may send the requests that change state (stop, reload); others get one refusal line
// and the handler never sees the request.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "proto/control.hpp"
#include "kvfdpd/daemon/ctl/event_loop.hpp"

namespace kvfdp::daemon {

struct ControlLimits {
	size_t max_connections = 64;   // all clients together
	size_t reserved_for_root = 8;  // of max_connections, only uid 0 may use these
	size_t max_per_uid = 16;       // connections one non-root uid may hold
	size_t max_queued_reply =
		64 << 10;  // replies not yet read: no further request is answered past it
	// One reply line's bytes at most: a longer one is answered by one error line instead.
	size_t max_reply = proto::kMaxReplyBytes;
	std::chrono::milliseconds idle_timeout{30000};             // no request under way
	std::chrono::milliseconds incomplete_line_timeout{10000};  // a line started, no progress
	std::chrono::milliseconds unread_reply_timeout{30000};     // replies queued, none read
	// The clock the timeouts are measured on (tests move it); empty: steady_clock::now.
	std::function<std::chrono::steady_clock::time_point()> now;
	// The gid whose members, beside uid 0, may send the requests that change state
	// (access_refusal); empty: proto::kAdminGroup's, looked up once at listen (none while that
	// group does not exist).
	std::optional<uint32_t> admin_gid;
};

// Why a new connection from uid is refused, as its one-line error reply; "" when it is
// admitted. open_total: connections open now; open_by_uid: those of uid.
[[nodiscard]] std::string admission_refusal(const ControlLimits &limits, uint32_t uid,
					    size_t open_total, size_t open_by_uid);

class ControlSource;  // control_server.cpp: the connections, on the loop

class ControlServer {
public:
	// Maps one request line to one reply line ('\n'-terminated). Called on the loop's
	// thread only; must not throw (exceptions are caught and answered as errors anyway).
	using Handler = std::function<std::string(std::string_view line)>;

	// Binds path (creating its directory, replacing a stale socket), mode 0660, group
	// `kvfdp` when that group exists. Clients may connect at once; they are served after
	// start(). Fails, naming what to do, when path is too long, is not a socket, or is
	// served by a running kvfdpd.
	[[nodiscard]] static Result<std::unique_ptr<ControlServer>>
	listen(const std::string &path, Handler handler, ControlLimits limits = {});
	~ControlServer();  // stop(), and the socket file removed
	ControlServer(const ControlServer &) = delete;
	ControlServer &operator=(const ControlServer &) = delete;

	// Serves on loop (from its next turn, or once it starts).
	void start(EventLoop &loop);
	// Off the loop, every connection closed; idempotent.
	void stop();
	[[nodiscard]] const std::string &path() const { return path_; }

private:
	ControlServer(std::string path, UniqueFd listen_fd, Handler handler, ControlLimits limits);

	std::string path_;
	std::unique_ptr<ControlSource> source_;
};

}  // namespace kvfdp::daemon
