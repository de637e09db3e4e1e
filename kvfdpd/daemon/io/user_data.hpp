// user_data packing for a queue ring that carries both ublk uring_cmds and device SQEs:
// tag (bits 15:0), kind (bits 23:16), sub-I/O index (bits 39:24); on a stripe, the member index
// (bits 63:56, from nvme::kStripeUserDataShift; the stripe's queue sets it). Checked widths.
#pragma once

#include <cstdint>

#include "nvme/stripe.hpp"
#include "kvfdpd/ublk/uapi.hpp"

namespace kvfdp::daemon {

enum class UdKind : uint8_t {
	ublk = 1,    // FETCH_REQ / COMMIT_AND_FETCH_REQ of a tag
	device = 2,  // one device command (sub-I/O) of a tag's request
	buf = 3,     // REGISTER_IO_BUF / UNREGISTER_IO_BUF of a tag's request (zero_copy_reg)
	// UBLK_F_BATCH_IO: the queue's multishot FETCH_IO_CMDS, a COMMIT_IO_CMDS (tag: its
	// commit buffer) and the PREP_IO_CMDS of every tag.
	batch_fetch = 4,
	batch_commit = 5,
	batch_prep = 6,
	wake = 7,  // the poll on the queue's wake eventfd (stop())
};

inline constexpr unsigned kUdTagBits = 16;
inline constexpr unsigned kUdKindBits = 8;
inline constexpr unsigned kUdSubBits = 16;
inline constexpr unsigned kUdKindShift = kUdTagBits;
inline constexpr unsigned kUdSubShift = kUdTagBits + kUdKindBits;
// Most device commands one request may be split into.
inline constexpr uint32_t kMaxSubIos = (1u << kUdSubBits) - 1;
static_assert(ublk::kMaxQueueDepth <= (1u << kUdTagBits), "every tag fits in the tag field");
static_assert(kUdSubShift + kUdSubBits <= 64, "fields fit in user_data");
static_assert(kUdSubShift + kUdSubBits <= nvme::kStripeUserDataShift,
	      "a stripe's queue has user_data's top bits for the member index (nvme/stripe.hpp)");

struct UserData {
	uint16_t tag = 0;
	UdKind kind = UdKind::ublk;
	uint16_t sub = 0;
};

[[nodiscard]] constexpr uint64_t pack_user_data(uint16_t tag, UdKind kind, uint16_t sub = 0)
{
	return static_cast<uint64_t>(tag) | static_cast<uint64_t>(kind) << kUdKindShift |
	       static_cast<uint64_t>(sub) << kUdSubShift;
}

[[nodiscard]] constexpr UserData unpack_user_data(uint64_t ud)
{
	return UserData{static_cast<uint16_t>(ud & ((1u << kUdTagBits) - 1)),
			static_cast<UdKind>((ud >> kUdKindShift) & ((1u << kUdKindBits) - 1)),
			static_cast<uint16_t>((ud >> kUdSubShift) & ((1u << kUdSubBits) - 1))};
}

}  // namespace kvfdp::daemon
