// Counters: a context's statistics (what kvgpu_stats reports), and the clock its times use.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

namespace kvfdp::gpu {

// The worker and the callers add, anyone reads (relaxed).
struct Counters {
	std::atomic<uint64_t> evicts{0}, evict_bytes{0}, evict_errors{0};
	std::atomic<uint64_t> loads{0}, load_bytes{0}, load_errors{0};
	std::atomic<uint64_t> removes{0}, checksum_failures{0};
	std::atomic<uint64_t> direct_files{0}, buffered_files{0}, hint_failures{0};
	std::atomic<uint64_t> writes{0}, reads{0};
	std::atomic<uint64_t> max_io{0}, max_copies{0}, stale_temps{0};
	std::atomic<uint64_t> batches{0}, prefetches{0}, prefetch_hits{0}, open_ns{0};
	std::atomic<int> last_errno{0};
};

// Raises m to v; one writer (the worker) per maximum.
inline void store_max(std::atomic<uint64_t> &m, uint64_t v)
{
	if (v > m.load(std::memory_order_relaxed))
		m.store(v, std::memory_order_relaxed);
}

// CLOCK_REALTIME in ns: the open time and a chunk header's creation time.
inline uint64_t now_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace kvfdp::gpu
