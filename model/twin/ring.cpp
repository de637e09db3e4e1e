// Ring: the consumer side and construction.
#include "model/twin/ring.hpp"

#include <algorithm>
#include <bit>

namespace kvfdp::twin {

Ring::Ring(uint32_t capacity, Wake *wake)
    : mask_(std::bit_ceil(std::max<uint32_t>(capacity, 2)) - 1), slots_(new Record[mask_ + 1]),
      wake_(wake)
{
	// Without a wake the first check never comes (a head of 2^64 is not reached).
	check_at_ = wake_ ? (mask_ + 1) / 2 : UINT64_MAX;
}

void Ring::check_fill(uint64_t head) noexcept
{
	const uint64_t half = (mask_ + 1) / 2;
	cached_tail_ = tail_.load(std::memory_order_acquire);
	if (head - cached_tail_ >= half) {
		// Half full or more: wake the consumer, and look again a quarter ring on in case
		// it has not drained by then.
		wake_->signal();
		check_at_ = head + std::max<uint64_t>(half / 2, 1);
	} else {
		check_at_ = cached_tail_ + half;  // the next crossing, after head
	}
}

uint32_t Ring::pop(Record *out, uint32_t max) noexcept
{
	const uint64_t tail = tail_.load(std::memory_order_relaxed);
	const uint64_t head = head_.load(std::memory_order_acquire);
	const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(head - tail, max));
	for (uint32_t i = 0; i < n; i++)
		out[i] = slots_[(tail + i) & mask_];
	tail_.store(tail + n, std::memory_order_release);
	return n;
}

}  // namespace kvfdp::twin
