// How many placement handles kvfdp keeps counters and maps for: what kvfdpd's counters, the
// learner's tables and the metric families (proto/counter_snapshot.hpp) are sized by.
#pragma once

namespace kvfdp::placement {

// Most placement handles kvfdp keeps counters and maps for (a device with more is refused).
inline constexpr unsigned kMaxHandles = 128;

}  // namespace kvfdp::placement
