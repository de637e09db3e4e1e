// ModelConfig: the geometry and policies of one simulated FDP SSD (kvfdp::model).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace kvfdp::model {

// How GC picks a victim reclaim unit.
enum class GcPolicy : uint8_t {
	greedy,        // fewest valid mapping units (O(1) per pick: buckets by valid count)
	cost_benefit,  // max (1 - u) * age / (1 + u), LFS-style (scans the full RUs)
};

// Reclaim unit handle type, as ruht in the FDP configurations log (0x20).
enum class HandleType : uint8_t {
	initially_isolated = 1,     // GC-relocated data of all such handles may share RUs
	persistently_isolated = 2,  // GC relocates a handle's data only into its own RUs
};

struct ModelConfig {
	uint64_t logical_bytes = uint64_t{1} << 30;  // namespace capacity the host sees
	uint32_t lba_size = 4096;                    // bytes, a power of two >= 512
	// Mapping granularity in bytes: a multiple of lba_size that divides ru_size. Writes
	// smaller than a unit are read-modify-write (the whole unit is programmed).
	uint32_t mapping_unit = 4096;
	uint64_t ru_size = uint64_t{1} << 20;  // reclaim unit size, bytes
	uint16_t nrg = 1;                      // reclaim groups
	uint16_t nruh = 8;                     // reclaim unit handles (per group)
	// Per-handle type; empty means every handle is initially isolated, else nruh entries.
	std::vector<HandleType> ruh_types;
	// Over-provisioning: (physical - logical) / logical. 0.28 means physical = 1.28 x logical.
	double op = 0.28;
	GcPolicy gc = GcPolicy::greedy;
	// GC starts in a reclaim group when its free RUs drop below gc_low and stops once it
	// has gc_high. 0 picks the defaults (2 and 3).
	uint32_t gc_low = 0;
	uint32_t gc_high = 0;
};

// Checks the config; the error says which field is wrong and what would work.
[[nodiscard]] Result<void> validate(const ModelConfig &cfg);

// "greedy" / "cost-benefit", and back.
[[nodiscard]] const char *gc_policy_name(GcPolicy p);
[[nodiscard]] Result<GcPolicy> parse_gc_policy(const std::string &s);

}  // namespace kvfdp::model
