// Wake: how a queue thread wakes the twin thread early, a futex on a generation counter. The
// twin thread reads the generation, drains its rings, then waits for the generation to move or
// a timeout; signal() moves it and wakes the waiter. A signal between the read and the wait is
// not lost: the wait then returns at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kvfdp::twin {

class Wake {
public:
	// The generation to pass to wait(): read it before looking at what a signal announces.
	[[nodiscard]] uint32_t generation() const noexcept
	{
		return gen_.load(std::memory_order_seq_cst);
	}
	// Waits until the generation is no longer seen or timeout has passed. true: it moved (a
	// signal since seen was read); false: the timeout.
	bool wait(uint32_t seen, std::chrono::milliseconds timeout) noexcept;
	// Any thread: moves the generation and wakes the waiter. One syscall; callers on a queue
	// thread make it only on an edge (Ring: a fill threshold crossed), never per I/O.
	void signal() noexcept;
	// Signals so far (the generation wraps at 2^32).
	[[nodiscard]] uint32_t signals() const noexcept { return generation(); }

private:
	std::atomic<uint32_t> gen_{0};
};

}  // namespace kvfdp::twin
