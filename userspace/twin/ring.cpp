// Ring: the consumer side and construction.
#include "userspace/twin/ring.hpp"

#include <algorithm>
#include <bit>

namespace kvfdp::twin {

Ring::Ring(uint32_t capacity)
    : mask_(std::bit_ceil(std::max<uint32_t>(capacity, 2)) - 1), slots_(new Record[mask_ + 1])
{
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
