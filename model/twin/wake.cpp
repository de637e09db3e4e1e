// Wake: the futex calls.
#include "model/twin/wake.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace kvfdp::twin {

namespace {

// The kernel reads and wakes the counter as a plain 32-bit word.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
static_assert(std::atomic<uint32_t>::is_always_lock_free);

long futex(std::atomic<uint32_t> &word, int op, uint32_t val, const timespec *timeout) noexcept
{
	return ::syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), op, val, timeout, nullptr,
			 0);
}

}  // namespace

bool Wake::wait(uint32_t seen, std::chrono::milliseconds timeout) noexcept
{
	using std::chrono::steady_clock;
	const auto deadline = steady_clock::now() + timeout;
	for (;;) {
		if (gen_.load(std::memory_order_seq_cst) != seen)
			return true;
		const auto left = deadline - steady_clock::now();
		if (left <= steady_clock::duration::zero())
			return false;
		const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
		const timespec ts{static_cast<time_t>(ns / 1000000000),
				  static_cast<long>(ns % 1000000000)};
		// EAGAIN (moved before the kernel looked), EINTR, ETIMEDOUT: the loop looks again.
		(void)futex(gen_, FUTEX_WAIT_PRIVATE, seen, &ts);
	}
}

void Wake::signal() noexcept
{
	gen_.fetch_add(1, std::memory_order_seq_cst);
	(void)futex(gen_, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

}  // namespace kvfdp::twin
