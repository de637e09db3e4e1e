// What the learner's files (learner.cpp: the data path, pins and names; learner_group.cpp:
// recompute() and its grouping; learner_state.cpp: the state file) share: the slot table's
// constants, the handle masks, the estimates recompute() keeps per slot and the candidate it
// groups. Not for other files: learner.hpp is the interface.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "placement/learner.hpp"

namespace kvfdp::placement::learner_detail {

inline constexpr uint32_t kSlots = 2 * Learner::kMaxKeys;  // power of two, at most half full
inline constexpr uint32_t kMaxProbe = 64;                  // bounded data-path probe
inline constexpr uint16_t kNoHandle = 0xFFFF;
// The tag of a retired key's slot (a tombstone): probes pass it, a new key may claim it.
// key_word() never gives it (its largest value is 2^63).
inline constexpr uint64_t kRetired = ~uint64_t{0};
// Claims that lose their CAS to another key retry the probe this many times, then overflow.
inline constexpr uint32_t kMaxClaimTries = 4;

inline uint32_t slot_hash(uint64_t word)
{
	uint64_t z = word * 0x9E3779B97F4A7C15ull;
	z ^= z >> 29;
	return static_cast<uint32_t>(z) & (kSlots - 1);
}

inline bool contains(const std::vector<uint16_t> &v, uint16_t h)
{
	return std::find(v.begin(), v.end(), h) != v.end();
}

inline bool mask_has(uint64_t lo, uint64_t hi, unsigned h)
{
	return h < 64 ? (lo >> h) & 1 : (hi >> (h - 64)) & 1;
}

inline void mask_set(uint64_t &lo, uint64_t &hi, unsigned h)
{
	if (h < 64)
		lo |= uint64_t{1} << h;
	else if (h < 128)
		hi |= uint64_t{1} << (h - 64);
}

// died_age counts (bytes / 512) x (age / 512).
inline constexpr double kAgeUnit = 512.0 * 512.0;

}  // namespace kvfdp::placement::learner_detail

namespace kvfdp::placement {

// What recompute() keeps per slot.
struct Learner::KeyState {
	uint64_t seen_written = 0;  // slot counters at the last recompute
	uint64_t seen_died = 0;
	uint64_t seen_age = 0;
	std::array<uint32_t, kAgeBuckets> seen_ages{};
	std::array<double, kAgeBuckets> ages{};  // decayed bytes died per age bucket
	double share = 0;                        // decayed share of device writes
	double age_num = 0;                      // decayed sum of bytes x age of deaths
	double age_den = 0;                      // decayed bytes of deaths
	double lifetime = 0;                     // estimate, device bytes (0: unknown)
	uint32_t group = 0;
	bool pinned = false;
	// The class split (class_split.hpp): the clock at the first recompute that saw the key
	// written (meaningful once seen_written > 0), and whether its class part and its writer
	// part were given up.
	uint64_t first_write = 0;
	bool class_given_up = false;
	bool writer_given_up = false;
	bool writer_cut = false;  // its writer part was cut at the last recompute
	bool class_cut = false;   // its class part was cut on measurement at the last recompute
	bool went_idle = false;   // it stopped while its writer wrote on (mark_relabels)
	// The clock at the last recompute that saw the key write (retirement).
	uint64_t last_write = 0;
	// The key's writer as name_keys() named it ("" none yet): kept in the state file, so a
	// restarted kvfdpd shows an identity before its writer creates a file again.
	std::string name;
};

template <class F> void Learner::each_key(F &&f) const
{
	for (uint32_t i = 0; i < learner_detail::kSlots; i++) {
		const uint64_t tag = slots_[i].tag.load(std::memory_order_acquire);
		if (tag != 0 && tag != learner_detail::kRetired)
			f(slots_[i], tag, state_[i]);
	}
}

// A group's claim on a handle its keys are on (assign_handles()).
struct Learner::Claim {
	double writing;  // votes of keys that wrote since the last recompute
	double idle;     // the others'
	uint32_t group;
	uint16_t handle;
};

// One unpinned key as recompute() groups it.
struct Learner::Cand {
	uint32_t slot;
	double life;
	double share;
	uint16_t handle;
	uint8_t cls = 0;
};

}  // namespace kvfdp::placement
