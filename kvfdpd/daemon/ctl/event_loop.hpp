// EventLoop: the one epoll thread that serves kvfdpd's control-plane sockets, the control
// socket (control_server.hpp) and GET /metrics (http_metrics.hpp). Each server is an
// EventSource: its listening socket and connections are non-blocking, what a client has not
// sent or not read is buffered per connection, so a slow or silent client of one server
// holds a buffer, never the thread. stop() wakes the thread with an eventfd.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace kvfdp::daemon {

class EventLoop;

// A server on an EventLoop. The hooks run on the loop's thread (or on the caller's while the
// loop is not running), never two at once.
class EventSource {
public:
	virtual ~EventSource() = default;
	// The loop this source is attached to; null when none.
	[[nodiscard]] EventLoop *loop() const { return loop_; }

protected:
	friend class EventLoop;
	// Attached to loop: watch the listening socket (EventLoop::watch).
	virtual void on_attach(EventLoop &loop) = 0;
	// fd, one this source watches, is ready: events are epoll's.
	virtual void on_ready(int fd, uint32_t events) = 0;
	// Once per turn, after its events: close what is stale; returns how long the loop may
	// wait before the next call.
	virtual std::chrono::milliseconds on_tick() = 0;
	// Detached (its fds are no longer watched): close every connection.
	virtual void on_detach() = 0;

private:
	EventLoop *loop_ = nullptr;
};

class EventLoop {
public:
	[[nodiscard]] static Result<std::unique_ptr<EventLoop>> create();
	// Stops the thread, then detaches every source still attached (each closes its
	// connections), so sources and loop may be destroyed in either order.
	~EventLoop();
	EventLoop(const EventLoop &) = delete;
	EventLoop &operator=(const EventLoop &) = delete;

	// Serves the attached sources on a thread of its own until stop().
	void start();
	// Wakes and joins the thread; sources stay attached, unserved. Idempotent.
	void stop();

	// Attaches s (on_attach) and detaches it (its fds unwatched, then on_detach); both wait
	// until the loop thread did it. detach of a source not on this loop does nothing.
	void attach(EventSource &s);
	void detach(EventSource &s);

	// For sources, in their hooks: watch fd for events (EPOLLIN, EPOLLOUT, ...), change them,
	// stop watching it (before it is closed). False when epoll refused the fd.
	bool watch(int fd, uint32_t events, EventSource &s);
	void rewatch(int fd, uint32_t events);
	void unwatch(int fd);

private:
	EventLoop(UniqueFd epoll_fd, UniqueFd wake_fd);
	void run();
	// Runs fn on the loop thread and returns once it ran; runs it here when the loop is not
	// running or this is its thread.
	void call(const std::function<void()> &fn);
	// On the loop thread: the queued calls; false when stop() asked it to end.
	bool on_wake();
	int tick_ms();

	struct Call {
		const std::function<void()> *fn;
		bool done = false;
	};

	UniqueFd epoll_fd_;
	UniqueFd wake_fd_;
	std::unordered_map<int, EventSource *> watched_;  // loop thread only
	std::vector<EventSource *> sources_;              // attached, in order
	std::thread thread_;
	std::mutex mu_;  // guards running_, stopping_, calls_, loop_id_
	std::thread::id loop_id_;
	std::condition_variable done_cv_;
	bool running_ = false;
	bool stopping_ = false;
	std::vector<Call *> calls_;
};

}  // namespace kvfdp::daemon
