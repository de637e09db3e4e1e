// Twin records and the per-queue SPSC ring that carries them from a queue thread to the
// twin thread: fixed-size slots, no allocation after construction, a full ring drops, and a
// ring that fills past half wakes the twin thread (once per crossing, not per record).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "model/twin/wake.hpp"

namespace kvfdp::twin {

// What the device was asked to do with a range of LBAs.
enum class Op : uint8_t {
	write = 1,         // host write on handle
	discard = 2,       // Dataset Management deallocate
	write_zeroes = 3,  // write zeroes: the model trims, as the model backend does
};

// One I/O as the twin sees it, in the ublk device's LBAs (fixed width, no pointers).
struct Record {
	uint64_t slba = 0;
	uint32_t nlb = 0;
	uint16_t handle = 0;  // writes: the handle index kvfdpd placed it on
	Op op = Op::write;
	uint8_t pad = 0;
};
static_assert(sizeof(Record) == 16, "twin::Record is one 16-byte slot");

// Single producer (one queue thread), single consumer (whoever holds the twin's model lock).
// push never blocks or allocates: a full ring drops the record and counts it. With a Wake,
// the push that finds the ring half full signals it: one syscall per crossing, none per record
// (the fill is checked against the consumer's tail once per quarter ring of pushes at most).
class Ring {
public:
	// capacity is rounded up to a power of two, at least 2. wake: signalled when the ring
	// fills past half (null: never).
	explicit Ring(uint32_t capacity, Wake *wake = nullptr);
	Ring(const Ring &) = delete;
	Ring &operator=(const Ring &) = delete;

	// Producer only. false (and dropped() + 1) when the ring is full.
	bool push(const Record &r) noexcept
	{
		const uint64_t head = head_.load(std::memory_order_relaxed);
		if (head - cached_tail_ > mask_) {
			cached_tail_ = tail_.load(std::memory_order_acquire);
			if (head - cached_tail_ > mask_) {
				dropped_.store(dropped_.load(std::memory_order_relaxed) + 1,
					       std::memory_order_relaxed);
				return false;
			}
		}
		slots_[head & mask_] = r;
		head_.store(head + 1, std::memory_order_release);
		if (head + 1 == check_at_) [[unlikely]]
			check_fill(head + 1);
		return true;
	}
	// Consumer only: moves up to max records into out, oldest first; returns how many.
	uint32_t pop(Record *out, uint32_t max) noexcept;

	[[nodiscard]] uint32_t capacity() const { return static_cast<uint32_t>(mask_ + 1); }
	// Records accepted (producer's count; any thread may read it).
	[[nodiscard]] uint64_t pushed() const { return head_.load(std::memory_order_relaxed); }
	// Records taken by the consumer (any thread may read it).
	[[nodiscard]] uint64_t popped() const { return tail_.load(std::memory_order_acquire); }
	// Records dropped because the ring was full.
	[[nodiscard]] uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
	// Bytes of the slots.
	[[nodiscard]] uint64_t memory_bytes() const
	{
		return uint64_t{capacity()} * sizeof(Record);
	}

private:
	// Producer, at head == check_at_: signals wake_ when the ring holds half its capacity or
	// more, then sets where to look next.
	void check_fill(uint64_t head) noexcept;

	// The producer's line: where it writes next, its copy of tail_, its drop count, the head
	// at which it next compares the fill with half the capacity.
	alignas(64) std::atomic<uint64_t> head_{0};
	uint64_t cached_tail_ = 0;
	std::atomic<uint64_t> dropped_{0};
	uint64_t check_at_ = 0;
	// The consumer's line: where it reads next.
	alignas(64) std::atomic<uint64_t> tail_{0};
	alignas(64) uint64_t mask_ = 0;
	std::unique_ptr<Record[]> slots_;
	Wake *wake_ = nullptr;
};

// The ring a queue feeds, or null when the twin is off: the engine's hooks.
inline void record_write(Ring *ring, uint64_t slba, uint32_t nlb, uint16_t handle) noexcept
{
	if (ring)
		ring->push(Record{slba, nlb, handle, Op::write, 0});
}
inline void record_trim(Ring *ring, Op op, uint64_t slba, uint32_t nlb) noexcept
{
	if (ring)
		ring->push(Record{slba, nlb, 0, op, 0});
}

}  // namespace kvfdp::twin
