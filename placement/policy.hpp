// A policy config checked against a device: the class -> handle map with the config's
// overrides applied, and every handle named by the config in range.
#pragma once

#include <array>
#include <cstdint>

#include "common/result.hpp"
#include "placement/config.hpp"
#include "placement/handle_map.hpp"

namespace kvfdp::placement {

// A validated policy for a device with nruh handles.
struct Policy {
	PolicyConfig config;
	uint16_t nruh = 0;
	std::array<uint16_t, kNumClasses> handle{};  // handle index per class
	uint64_t generation = 0;
	int64_t loaded_at = 0;  // Unix seconds
};

// Checks cfg against a device with nruh handles (nruh 0: a backend without placement, where
// every class goes to handle 0). Every handle the config names ([placement] and [[writer]]
// handle) must be below nruh. The error names the key and its file:line.
[[nodiscard]] Result<Policy> make_policy(const PolicyConfig &cfg, uint16_t nruh);

// The handle a writer rule fixes, under policy p: its handle, else its class's handle in
// p's map; nullopt when the rule fixes neither (the learner places that writer).
[[nodiscard]] std::optional<uint16_t> fixed_handle(const WriterRule &w, const Policy &p);

}  // namespace kvfdp::placement
