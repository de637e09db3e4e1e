// kvfdpd's I/O counters as it reports them: the sums over its queues at one moment, the
// input of the `status` reply's counts and of the metric families (proto/metrics.hpp).
#pragma once

#include <array>
#include <cstdint>

#include "nvme/stripe_limits.hpp"
#include "placement/classes.hpp"
#include "placement/handle_limits.hpp"

namespace kvfdp::proto {

// Sum over the queues at one moment (each counter read once; not a consistent cut).
struct CounterSnapshot {
	std::array<uint64_t, placement::kNumClasses> class_bytes{};
	std::array<uint64_t, placement::kNumClasses> class_writes{};
	std::array<uint64_t, placement::kMaxHandles> handle_bytes{};
	std::array<uint64_t, placement::kMaxHandles> handle_writes{};
	std::array<std::array<uint64_t, placement::kMaxHandles>, nvme::kMaxStripeMembers>
		member_handle_bytes{};
	uint64_t reads = 0, read_bytes = 0, writes = 0, write_bytes = 0, flushes = 0;
	uint64_t discards = 0, discard_bytes = 0, write_zeroes = 0, write_zeroes_bytes = 0;
	uint64_t stale_tags = 0, errors = 0, unsupported = 0;
	uint64_t copied_bytes = 0;
};

}  // namespace kvfdp::proto
