// Next-fit extent allocator over a start-ordered map of free runs.
#include "model/workload/extent_alloc.hpp"

#include <cassert>
#include <iterator>

namespace kvfdp::workload {

ExtentAllocator::ExtentAllocator(uint64_t total_blocks) : total_(total_blocks), free_(total_blocks)
{
	if (total_blocks > 0)
		free_map_.emplace(0, total_blocks);
}

void ExtentAllocator::take(std::map<uint64_t, uint64_t>::iterator it, uint64_t n,
			   std::vector<Extent> &out)
{
	uint64_t start = it->first;
	uint64_t len = it->second;
	assert(n <= len);
	out.push_back({start, n});
	free_map_.erase(it);
	if (n < len)
		free_map_.emplace(start + n, len - n);
	free_ -= n;
	cursor_ = start + n;
	if (cursor_ >= total_)
		cursor_ = 0;
}

std::vector<Extent> ExtentAllocator::allocate(uint64_t n)
{
	std::vector<Extent> out;
	if (n == 0 || n > free_)
		return out;
	// Next fit: the first run of >= n blocks at or after the cursor, then from the start.
	// A run that contains the cursor counts as starting at it (its tail is used).
	auto first = free_map_.upper_bound(cursor_);
	if (first != free_map_.begin()) {
		auto prev = std::prev(first);
		if (prev->first + prev->second > cursor_)
			first = prev;
	}
	for (int pass = 0; pass < 2; ++pass) {
		auto begin = pass == 0 ? first : free_map_.begin();
		auto end = pass == 0 ? free_map_.end() : first;
		for (auto it = begin; it != end; ++it) {
			if (it->second >= n) {
				take(it, n, out);
				return out;
			}
		}
	}
	// Fragmented: take whole runs in address order from the cursor until n is met.
	uint64_t need = n;
	while (need > 0) {
		auto it = free_map_.lower_bound(cursor_);
		if (it == free_map_.end())
			it = free_map_.begin();
		uint64_t piece = it->second < need ? it->second : need;
		take(it, piece, out);
		need -= piece;
	}
	return out;
}

void ExtentAllocator::release(const std::vector<Extent> &extents)
{
	for (const Extent &e : extents) {
		if (e.len == 0)
			continue;
		assert(e.start + e.len <= total_);
		uint64_t start = e.start;
		uint64_t len = e.len;
		auto next = free_map_.lower_bound(start);
		assert(next == free_map_.end() || next->first >= start + len);
		if (next != free_map_.begin()) {
			auto prev = std::prev(next);
			assert(prev->first + prev->second <= start);
			if (prev->first + prev->second == start) {
				start = prev->first;
				len += prev->second;
				free_map_.erase(prev);
			}
		}
		if (next != free_map_.end() && next->first == e.start + e.len) {
			len += next->second;
			free_map_.erase(next);
		}
		free_map_.emplace(start, len);
		free_ += e.len;
	}
}

}  // namespace kvfdp::workload
