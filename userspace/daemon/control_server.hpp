// ControlServer: the Unix socket (JSON lines) served by its own epoll thread, so no client
// can stall the I/O queues. Limits: 64 KiB per line, 64 connections, 10 s for an
// incomplete line, 1 MiB of unread replies.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace kvfdp::daemon {

class ControlServer {
public:
	// Maps one request line to one reply line ('\n'-terminated). Called on the server
	// thread only; must not throw (exceptions are caught and answered as errors anyway).
	using Handler = std::function<std::string(std::string_view line)>;

	// Binds path (creating its directory, replacing a stale socket), mode 0660, group
	// `kvfdp` when that group exists.
	[[nodiscard]] static Result<std::unique_ptr<ControlServer>> listen(const std::string &path, Handler handler);
	~ControlServer();
	ControlServer(const ControlServer &) = delete;
	ControlServer &operator=(const ControlServer &) = delete;

	void start();
	void stop();
	[[nodiscard]] const std::string &path() const { return path_; }

private:
	ControlServer(std::string path, UniqueFd listen_fd, UniqueFd epoll_fd, UniqueFd wake_fd, Handler handler);
	void run();

	std::string path_;
	UniqueFd listen_fd_;
	UniqueFd epoll_fd_;
	UniqueFd wake_fd_;
	Handler handler_;
	std::thread thread_;
};

} // namespace kvfdp::daemon
