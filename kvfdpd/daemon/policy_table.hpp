// PolicyTable: the class -> handle map kvfdpd's queue threads read (atomics, no locks). The
// validated policy and the default map it is published from are the placement library's
// (placement/policy.hpp).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "placement/policy.hpp"
#include "placement/classes.hpp"

namespace kvfdp::daemon {

// The class -> handle map the queue threads read: one atomic per class, relaxed loads.
class PolicyTable {
public:
	PolicyTable() = default;
	void publish(const std::array<uint16_t, placement::kNumClasses> &map)
	{
		for (unsigned i = 0; i < placement::kNumClasses; i++)
			handle_[i].store(map[i], std::memory_order_relaxed);
		generation_.fetch_add(1, std::memory_order_release);
	}
	[[nodiscard]] uint16_t handle_of(uint8_t cls) const
	{
		return handle_[cls < placement::kNumClasses ? cls : 0].load(
			std::memory_order_relaxed);
	}
	[[nodiscard]] uint64_t generation() const
	{
		return generation_.load(std::memory_order_acquire);
	}

private:
	std::array<std::atomic<uint16_t>, placement::kNumClasses> handle_{};
	std::atomic<uint64_t> generation_{0};
};

}  // namespace kvfdp::daemon
