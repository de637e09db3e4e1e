// Decoding command results: 0 (success), a positive NVMe status as the kernel reports it
// (SC bits 7:0, SCT 10:8, CRD 12:11, More 13, DNR 14), or a negative errno.
#pragma once

#include <cstdint>
#include <string>
#include <system_error>

#include "common/result.hpp"

namespace kvfdp::nvme {

enum class ResultKind : uint8_t { success, nvme_status, os_error };

[[nodiscard]] constexpr ResultKind classify_result(int res)
{
	return res == 0  ? ResultKind::success
	       : res > 0 ? ResultKind::nvme_status
			 : ResultKind::os_error;
}

// Status code types.
inline constexpr uint8_t kSctGeneric = 0;
inline constexpr uint8_t kSctCommandSpecific = 1;
inline constexpr uint8_t kSctMedia = 2;
inline constexpr uint8_t kSctPath = 3;
inline constexpr uint8_t kSctVendor = 7;

// Generic status codes kvfdp names in its own checks.
inline constexpr uint8_t kScInvalidOpcode = 0x01;
inline constexpr uint8_t kScInvalidField = 0x02;
inline constexpr uint8_t kScCommandSequenceError = 0x0C;
inline constexpr uint8_t kScDataSglLengthInvalid = 0x0F;
inline constexpr uint8_t kScFdpDisabled = 0x29;
inline constexpr uint8_t kScInvalidPlacementHandleList = 0x2A;
inline constexpr uint8_t kScLbaOutOfRange = 0x80;
inline constexpr uint8_t kScInvalidNamespaceOrFormat = 0x0B;
inline constexpr uint8_t kScCapacityExceeded = 0x81;
inline constexpr uint8_t kScReservationConflict = 0x83;
// Command specific (SCT 1) and media and data integrity (SCT 2) codes kvfdp names.
inline constexpr uint8_t kScConflictingAttributes = 0x80;
inline constexpr uint8_t kScWriteFault = 0x80;
inline constexpr uint8_t kScUnrecoveredReadError = 0x81;
inline constexpr uint8_t kScGuardCheckError = 0x82;
inline constexpr uint8_t kScApplicationTagCheckError = 0x83;
inline constexpr uint8_t kScReferenceTagCheckError = 0x84;
inline constexpr uint8_t kScDeallocatedOrUnwritten = 0x87;

// A decoded NVMe status (the positive value from cqe->res or an ioctl).
struct NvmeStatus {
	uint16_t raw = 0;
	[[nodiscard]] constexpr uint8_t sc() const { return raw & 0xFF; }
	[[nodiscard]] constexpr uint8_t sct() const { return (raw >> 8) & 0x7; }
	[[nodiscard]] constexpr uint8_t crd() const { return (raw >> 11) & 0x3; }
	[[nodiscard]] constexpr bool more() const { return (raw >> 13) & 1; }
	[[nodiscard]] constexpr bool dnr() const { return (raw >> 14) & 1; }
	// The status without CRD/More/DNR: SCT << 8 | SC.
	[[nodiscard]] constexpr uint16_t code() const { return raw & 0x7FF; }
};

// The spec's name of an SCT/SC pair, e.g. "Invalid Field in Command", "FDP Disabled";
// "Unknown status" when kvfdp has no name for it.
[[nodiscard]] const char *status_name(NvmeStatus st);
// "NVMe status 0x4002: Invalid Field in Command (SCT 0, SC 0x02, DNR)".
[[nodiscard]] std::string describe_status(NvmeStatus st);
// Any result: "success", describe_status(...), or "Invalid argument (-22)".
[[nodiscard]] std::string describe_result(int res);

// What a refused RUH Update (I/O Management Send, MO 1) status means for kvfdp, in words
// that say what to do: Invalid Command Opcode (the drive has no I/O Management Send),
// FDP Disabled, Invalid Field in Command (a PID or the PID count refused; QEMU refuses
// NPID >= min(128, handles)), Invalid Placement Handle List; otherwise status_name().
[[nodiscard]] std::string ruh_update_refusal(NvmeStatus st);

// The errno a block-layer request should fail with for a command result, after the kernel's
// nvme_error_status (what kvfdpd's ublk COMMIT carries): 0 for success; a positive status:
// Capacity Exceeded -> -ENOSPC; Invalid Opcode / Invalid Field / Invalid Namespace or Format /
// Conflicting Attributes -> -EOPNOTSUPP; LBA Out of Range -> -EREMOTEIO; Reservation
// Conflict -> -EBADE; Write Fault, Unrecovered Read, Deallocated -> -ENODATA; end-to-end
// check errors -> -EILSEQ; any path status -> -ENOLINK; else -EIO. CRD, More and DNR are
// ignored. A -errno passes through when the block layer knows it (ENOSPC, EOPNOTSUPP,
// ENOLINK, ENODATA, EILSEQ, EBADE, EREMOTEIO, ETIMEDOUT, EIO), else becomes -EIO.
[[nodiscard]] int result_to_errno(int res);

// The std::error_category of NVMe statuses: value = raw status, message = describe_status.
[[nodiscard]] const std::error_category &nvme_category();
// An Error for a failed result (res != 0): errno (system category) or NVMe status
// (nvme_category()). context says what was being done.
[[nodiscard]] Error result_error(int res, std::string context);

}  // namespace kvfdp::nvme
