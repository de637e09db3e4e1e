// Window: the twin's recent window, the last records its sampled models were fed, in the
// sampled model's LBAs, for `kvfdp advise --twin` (docs/advise.md). A ring of fixed-size
// slots allocated once, written by the twin thread only (under Twin's model lock): a push
// overwrites the oldest record when full and never allocates.
#pragma once

#include <cstdint>
#include <memory>

#include "proto/twin_window.hpp"
#include "model/twin/ring.hpp"

namespace kvfdp::twin {

class Window {
public:
	// Holds the last capacity records (0: none are kept).
	explicit Window(uint64_t capacity);
	Window(const Window &) = delete;
	Window &operator=(const Window &) = delete;

	// Appends r (model LBAs), made at now_ms since the twin started; overwrites the oldest
	// when full. No allocation.
	void push(const Record &r, uint32_t now_ms) noexcept
	{
		if (!capacity_)
			return;
		const uint64_t i = total_ % capacity_;
		slots_[i] = r;
		times_[i] = now_ms;
		total_++;
	}
	[[nodiscard]] uint64_t capacity() const { return capacity_; }
	// Records ever pushed.
	[[nodiscard]] uint64_t total() const { return total_; }
	// Records held now: min(total, capacity).
	[[nodiscard]] uint64_t size() const { return total_ < capacity_ ? total_ : capacity_; }
	// The i-th record held, oldest first (i < size()), and its time.
	[[nodiscard]] const Record &at(uint64_t i) const { return slots_[index(i)]; }
	[[nodiscard]] uint32_t time_at(uint64_t i) const { return times_[index(i)]; }
	// Bytes of the slots and their times.
	[[nodiscard]] uint64_t memory_bytes() const
	{
		return capacity_ * (sizeof(Record) + sizeof(uint32_t));
	}
	// At most max of the records held (oldest first), from record number from on (one
	// overwritten since: from the oldest held), with the numbers of the first and the next,
	// the whole window's count and span, and the newest's age at now_ms. Allocates: the control
	// thread's, never a queue's.
	void fill(proto::TwinWindow &w, uint32_t now_ms, uint64_t from = 0,
		  uint64_t max = UINT64_MAX) const;

private:
	[[nodiscard]] uint64_t index(uint64_t i) const { return (total_ - size() + i) % capacity_; }

	uint64_t capacity_;
	uint64_t total_ = 0;
	std::unique_ptr<Record[]> slots_;
	std::unique_ptr<uint32_t[]> times_;  // ms since the twin started (wraps after 49 days)
};

}  // namespace kvfdp::twin
