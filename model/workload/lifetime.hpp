// The oracle's view of lifetimes: a pre-pass records when each written version is born and
// dies (on a write clock), then versions are bucketed into SHORT..EXTREME by lifetime.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace kvfdp::workload {

// Lifetime clock: bytes written to the device so far. This is the clock garbage collection
// sees (how much was written while the data stayed valid), not wall time.
class LifetimeRecorder {
public:
	static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

	// A new version of `bytes` written at `clock`; returns its index (0, 1, ...).
	uint64_t birth(uint64_t clock, uint64_t bytes);
	// The version died (unlinked, overwritten or trimmed) at `clock`.
	void death(uint64_t version, uint64_t clock);

	[[nodiscard]] uint64_t versions() const { return birth_.size(); }
	// kNever for versions still alive at the end.
	[[nodiscard]] uint64_t lifetime(uint64_t version) const;

	// A class per version: SHORT, MEDIUM, LONG, EXTREME by byte-weighted lifetime quartiles
	// (a version goes to the quartile its first byte falls in; equal lifetimes share a
	// class), and EXTREME for every version that never dies.
	[[nodiscard]] std::vector<uint8_t> classify() const;

private:
	std::vector<uint64_t> birth_;
	std::vector<uint64_t> death_;
	std::vector<uint64_t> bytes_;
};

}  // namespace kvfdp::workload
