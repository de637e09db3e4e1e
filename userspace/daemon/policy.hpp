// Placement policy: class -> handle map, directory rules, what to watch. A Policy is
// immutable once built; queue threads read the map through PolicyTable (atomics, no locks).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "userspace/daemon/classes.hpp"

namespace kvfdp::daemon {

// Most placement handles kvfdpd keeps counters for (handles beyond it are refused).
inline constexpr unsigned kMaxHandles = 128;

// A directory rule: files created under path get class cls.
struct DirRule {
	std::string path;
	uint8_t cls = KVFDP_CLASS_NOT_SET;
	int line = 0;  // config line, 0 if unknown
};

// What the config file says, before it is checked against a device.
struct PolicyConfig {
	std::string source;                          // file path, or "" for the built-in default
	std::array<std::optional<uint16_t>, kNumClasses> handle{};  // unset: the default map
	std::array<int, kNumClasses> line{};         // config line of each placement key, or 0
	std::vector<DirRule> rules;
	std::string watch_dir;                       // where rules and file records apply ("" = all)
};

// An error that is its message alone (no errno text appended): configuration mistakes.
[[nodiscard]] inline Error plain_error(std::string message) { return Error{std::error_code(), std::move(message)}; }

// A validated policy for a device with nruh handles.
struct Policy {
	PolicyConfig config;
	uint16_t nruh = 0;
	std::array<uint16_t, kNumClasses> handle{};  // handle index per class
	uint64_t generation = 0;
	int64_t loaded_at = 0;                       // Unix seconds
};

// ARCHITECTURE.md decision 4: NOT_SET, NONE -> 0; SHORT..EXTREME -> 1..4; with fewer handles
// neighbouring classes share (default stays alone on 0 while there are two or more).
[[nodiscard]] std::array<uint16_t, kNumClasses> default_map(uint16_t nruh);

// Checks cfg against a device with nruh handles (nruh 0: a backend without placement, where
// every class goes to handle 0). The error names the key and its file:line.
[[nodiscard]] Result<Policy> make_policy(const PolicyConfig &cfg, uint16_t nruh);

// The class -> handle map the queue threads read: one atomic per class, relaxed loads.
class PolicyTable {
public:
	PolicyTable() = default;
	void publish(const std::array<uint16_t, kNumClasses> &map)
	{
		for (unsigned i = 0; i < kNumClasses; i++)
			handle_[i].store(map[i], std::memory_order_relaxed);
		generation_.fetch_add(1, std::memory_order_release);
	}
	[[nodiscard]] uint16_t handle_of(uint8_t cls) const
	{
		return handle_[cls < kNumClasses ? cls : 0].load(std::memory_order_relaxed);
	}
	[[nodiscard]] uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

private:
	std::array<std::atomic<uint16_t>, kNumClasses> handle_{};
	std::atomic<uint64_t> generation_{0};
};

} // namespace kvfdp::daemon
