// A filesystem-like block allocator: next-fit over free extents of fixed-size blocks.
// Files get one extent when a large enough free run exists, else several (fragmentation).
#pragma once

#include <cstdint>
#include <cstddef>
#include <map>
#include <vector>

namespace kvfdp::workload {

// A run of consecutive blocks [start, start + len).
struct Extent {
	uint64_t start = 0;
	uint64_t len = 0;
};

class ExtentAllocator {
public:
	// Manages blocks [0, total_blocks), all free.
	explicit ExtentAllocator(uint64_t total_blocks);

	// Allocates n > 0 blocks, searching from the cursor (where the last allocation ended)
	// and wrapping: the first free extent of at least n blocks, else pieces in address
	// order from the cursor. Returns an empty vector when fewer than n blocks are free.
	[[nodiscard]] std::vector<Extent> allocate(uint64_t n);
	// Returns extents to the free list, merging neighbours. Each must be allocated.
	void release(const std::vector<Extent> &extents);

	[[nodiscard]] uint64_t total_blocks() const { return total_; }
	[[nodiscard]] uint64_t free_blocks() const { return free_; }
	// Number of separate free runs (a measure of fragmentation).
	[[nodiscard]] size_t free_extents() const { return free_map_.size(); }

private:
	void take(std::map<uint64_t, uint64_t>::iterator it, uint64_t n, std::vector<Extent> &out);

	uint64_t total_;
	uint64_t free_;
	uint64_t cursor_ = 0;
	std::map<uint64_t, uint64_t> free_map_;  // start -> len, non-adjacent runs
};

}  // namespace kvfdp::workload
