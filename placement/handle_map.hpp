// The default lifetime class -> placement handle map: the one copy kvfdpd, `kvfdp ruh`,
// `kvfdp policy` and `kvfdp simulate --placement hint` use. docs/placement.md states the rule.
#pragma once

#include <array>
#include <cstdint>

#include "placement/classes.hpp"
#include "placement/handle_limits.hpp"

namespace kvfdp::placement {

// The rule (docs/placement.md "Default map"): NOT_SET and NONE -> handle 0 (the default).
// SHORT, MEDIUM, LONG, EXTREME are levels 0..3 and level L goes to handle
//   1 + L * min(nruh - 1, 4) / 4     (integer division)
// so with 5 or more handles SHORT -> 1, MEDIUM -> 2, LONG -> 3, EXTREME -> 4, and with fewer
// neighbouring classes share evenly (3 handles: SHORT,MEDIUM -> 1, LONG,EXTREME -> 2;
// 4 handles: SHORT,MEDIUM -> 1, LONG -> 2, EXTREME -> 3), never a lower handle for a longer
// class, handle 0 alone for unhinted data while there are two or more handles.
// nruh 0 or 1: every class on handle 0.
[[nodiscard]] std::array<uint16_t, kNumClasses> default_map(uint16_t nruh);
// default_map(nruh)[cls]; a class out of range is handle 0.
[[nodiscard]] uint16_t default_handle(uint8_t cls, uint16_t nruh);

}  // namespace kvfdp::placement
