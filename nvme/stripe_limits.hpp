// How many members a stripe may have (nvme/stripe.hpp), and where a queued command carries
// its member: what the stripe, kvfdpd's counters and the metric families size by.
#pragma once

#include <cstdint>

namespace kvfdp::nvme {

// At most this many members; the member index of a queued command rides in user_data bits
// 63:kStripeUserDataShift (IoRequest::user_data must leave them 0).
inline constexpr uint32_t kMaxStripeMembers = 64;
inline constexpr unsigned kStripeUserDataShift = 56;
static_assert(kMaxStripeMembers <= (1u << (64 - kStripeUserDataShift)),
	      "every member index fits in user_data");

}  // namespace kvfdp::nvme
