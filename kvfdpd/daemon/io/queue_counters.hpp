// I/O counters: one QueueCounters per queue thread (single writer, relaxed stores, no lock
// prefix), summed into a CounterSnapshot when read by the control thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "nvme/stripe.hpp"
#include "proto/counter_snapshot.hpp"
#include "placement/classes.hpp"
#include "kvfdpd/daemon/policy_table.hpp"

namespace kvfdp::daemon {

// A counter written by one thread and read by others.
class Counter {
public:
	void add(uint64_t n)
	{
		v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
	}
	[[nodiscard]] uint64_t get() const { return v_.load(std::memory_order_relaxed); }

private:
	std::atomic<uint64_t> v_{0};
};

struct QueueCounters {
	std::array<Counter, placement::kNumClasses> class_bytes;
	std::array<Counter, placement::kNumClasses> class_writes;
	std::array<Counter, placement::kMaxHandles> handle_bytes;
	std::array<Counter, placement::kMaxHandles> handle_writes;
	// Bytes written per stripe member and handle, counted on a stripe only (a single namespace
	// leaves them 0: handle_bytes is its figure): what `kvfdp ruh` shows per member beside that
	// member's own RUH Status.
	std::array<std::array<Counter, placement::kMaxHandles>, nvme::kMaxStripeMembers>
		member_handle_bytes;
	Counter reads, read_bytes;
	Counter writes, write_bytes;
	Counter flushes;
	Counter discards, discard_bytes;
	Counter write_zeroes, write_zeroes_bytes;
	Counter stale_tags;
	Counter errors;
	Counter unsupported;
	// Read/write bytes the ublk driver copied between a request's pages and kvfdpd's tag
	// buffers for it (copy mode); zero copy moves none.
	Counter copied_bytes;
};

// The sums (proto/counter_snapshot.hpp: what the status reply and the metrics report).
[[nodiscard]] proto::CounterSnapshot sum_counters(const std::vector<const QueueCounters *> &queues);

}  // namespace kvfdp::daemon
