// Striping: one Device over N member Devices (FDP namespaces on one or several controllers),
// RAID-0 style in units of the stripe size. docs/nvme.md "Striping".
//
// API for the surface (control replies, CLI, metrics):
//   nvme::StripeDevice *sd = nvme::as_stripe(device);   // nullptr: not striped
//   sd->members()          -> span of StripeMember{path, device}, in --device order
//   sd->members()[m].device->handles() / log_page(0x22)  // that member's own RUH Status / stats
//   sd->layout()           -> StripeLayout{members, unit_nlb}: unit_nlb = stripe size / lba_size
//   sd->stripe_bytes()     -> the stripe size in bytes
//   sd->member_nlb()       -> LBAs used on each member (whole stripe units)
//   sd->note()             -> "" or one line about the members (e.g. a member with more handles)
// The StripeDevice's own info()/handles()/log_page() are the totals: handles() has one entry
// per stripe handle index with RUAMW summed over members (see handles() for its PIDs); log
// 0x22 sums HBMW/MBMW/MBE (so its WAF is the stripe's); 0x21 marks a RUH used when any member
// has it used; 0x23 lists every member's events; 0x20 is member 0's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "nvme/stripe_limits.hpp"

namespace kvfdp::nvme {

static_assert(kMaxStripeMembers <= 256, "IoRequest::member is a u8");

// Where logical LBAs live: unit u = lba / unit_nlb goes to member u % members, at member
// LBA (u / members) * unit_nlb + lba % unit_nlb. members 1: the identity. Pure arithmetic.
struct StripeLayout {
	uint32_t members = 1;
	uint64_t unit_nlb = 0;  // LBAs per stripe unit; 0 with one member

	struct Piece {
		uint32_t member = 0;
		uint64_t mlba = 0;  // LBA on that member
		uint64_t nlb = 0;   // LBAs from lba to the end of its unit (UINT64_MAX unstriped)
	};
	[[nodiscard]] constexpr Piece map(uint64_t lba) const
	{
		if (members <= 1 || unit_nlb == 0)
			return Piece{0, lba, UINT64_MAX};
		const uint64_t u = lba / unit_nlb, off = lba % unit_nlb;
		return Piece{static_cast<uint32_t>(u % members), (u / members) * unit_nlb + off,
			     unit_nlb - off};
	}
	// Member m's LBAs below logical lba: the member LBA of m's first LBA at or after lba.
	[[nodiscard]] constexpr uint64_t member_below(uint32_t m, uint64_t lba) const
	{
		if (members <= 1 || unit_nlb == 0)
			return lba;
		const uint64_t u = lba / unit_nlb, off = lba % unit_nlb;
		const uint64_t row = u / members, col = u % members;
		return row * unit_nlb + (col > m ? unit_nlb : col == m ? off : 0);
	}
	// The one contiguous range of member m that logical [lba, lba + nlb) covers (its LBAs in
	// the range are consecutive on the member): a discard or write zeroes takes one command
	// per member. nlb 0 when the range holds none of m's LBAs.
	struct Range {
		uint64_t mlba = 0;
		uint64_t nlb = 0;
	};
	[[nodiscard]] constexpr Range member_range(uint32_t m, uint64_t lba, uint64_t nlb) const
	{
		const uint64_t a = member_below(m, lba), b = member_below(m, lba + nlb);
		return Range{a, b - a};
	}
};

// One member: the path it was given by (--device, or the model/file path) and its Device.
struct StripeMember {
	std::string path;
	Device *device = nullptr;
};

// "stripe member M (PATH)": how every message about one member names it.
[[nodiscard]] std::string stripe_member_name(size_t m, const std::string &path);

// The member Devices a stripe is made of, in order, as given.
struct StripeMemberSpec {
	std::string path;
	std::unique_ptr<Device> device;
};

struct StripeOptions {
	uint64_t stripe_bytes = 0;        // 0: default_stripe_bytes()
	std::string sysfs_root = "/sys";  // where a member's namespace identity (wwid) is read
};

// The default stripe size: the largest member's max_transfer rounded up to a power of two
// (MDTS is one: QEMU's 512 KiB, also where max_segments lowers the transfer limit to 508 KiB
// on Linux 6.1), at least 4 KiB, so one aligned request of up to that size is one command on
// one member.
[[nodiscard]] uint64_t default_stripe_bytes(std::span<const uint32_t> max_transfers);

class StripeDevice final : public Device {
public:
	~StripeDevice() override;
	[[nodiscard]] const DeviceInfo &info() const override { return info_; }
	// PID, RUHID and RUHT are member 0's: members may have other PIDs at a handle index, so a
	// member's own list is members()[m].device->handles(). Nothing addresses a member by these
	// PIDs (its queue and ruh_update() map the handle index to that member's own).
	[[nodiscard]] Result<std::vector<Handle>> handles() override;
	[[nodiscard]] Result<std::vector<uint8_t>> log_page(uint8_t lid, uint8_t lsp = 0) override;
	// One IoQueue per member on ring; requests name their member (IoRequest::member) and are
	// in member LBAs (the caller maps with layout()); the queue routes each to its member.
	[[nodiscard]] Result<std::unique_ptr<IoQueue>> open_queue(io_uring &ring) override;
	// The same handle indexes on every member (each with its own PIDs); the first refusal is
	// returned, naming its member, after every member was asked.
	[[nodiscard]] Result<void> ruh_update(std::span<const uint16_t> handles) override;

	[[nodiscard]] std::span<const StripeMember> members() const { return members_; }
	[[nodiscard]] const StripeLayout &layout() const { return layout_; }
	[[nodiscard]] uint64_t stripe_bytes() const { return layout_.unit_nlb * info_.lba_size; }
	[[nodiscard]] uint64_t member_nlb() const { return member_nlb_; }
	[[nodiscard]] const std::string &note() const { return note_; }
	// A 64-bit digest of the stripe size and each member's identity in order (its namespace
	// wwid where sysfs has one, else its canonical path), never 0: kvfdpd keeps it in the
	// ublk device (ublksrv_flags) and refuses to re-attach a different member list.
	[[nodiscard]] uint64_t fingerprint() const { return fingerprint_; }

private:
	friend Result<std::unique_ptr<StripeDevice>>
	open_stripe_device(std::vector<StripeMemberSpec>, const StripeOptions &);
	StripeDevice() = default;

	DeviceInfo info_;
	StripeLayout layout_;
	uint64_t member_nlb_ = 0;
	uint16_t nruh_ = 0;
	std::vector<std::unique_ptr<Device>> owned_;
	std::vector<StripeMember> members_;
	std::string note_;
	uint64_t fingerprint_ = 0;
};

// Builds the stripe. Refused, one line naming the member and what to do: fewer than 2 or more
// than kMaxStripeMembers members; a member without FDP enabled or without handles; members of
// different backends or LBA sizes; the same namespace twice (same node, a link to it, or
// another path to a namespace of the same wwid); a stripe size that is not a multiple of
// the LBA size and of 4 KiB; a member smaller than one stripe unit. The stripe's handles
// are the fewest any member has (note() names members with more, whose extra handles go
// unused). Capacity: members x the smallest member's LBAs rounded down to whole units.
[[nodiscard]] Result<std::unique_ptr<StripeDevice>>
open_stripe_device(std::vector<StripeMemberSpec> members, const StripeOptions &opts = {});

// The queue a StripeDevice opens: routes each request to qs[req.member] (its slba already a
// member LBA), carrying the member in user_data bits 63:kStripeUserDataShift; complete()
// hands each CQE to its member's queue. For rigs that build member queues themselves.
[[nodiscard]] std::unique_ptr<IoQueue> make_stripe_queue(std::vector<std::unique_ptr<IoQueue>> qs);

// The StripeDevice behind d, or nullptr when d is a single namespace.
[[nodiscard]] StripeDevice *as_stripe(Device &d);
[[nodiscard]] const StripeDevice *as_stripe(const Device &d);

// What identifies a member's namespace for the duplicate check, from its path: "rdev:M:m"
// for a device node, "ino:D:I" for a file, plus "wwid:..." from
// <sysfs_root>/block/nvmeXnY/wwid where the node is an NVMe namespace. Two members are the
// same when any key matches.
[[nodiscard]] std::vector<std::string> member_identity(const std::string &path,
						       const std::string &sysfs_root);

}  // namespace kvfdp::nvme
