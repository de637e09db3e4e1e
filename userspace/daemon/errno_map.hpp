// Device results -> errno for the block layer (what ublk's COMMIT carries).
#pragma once

namespace kvfdp::daemon {

// result: 0, -errno (kernel / transport), or a positive NVMe status (SCT << 8 | SC, DNR in
// bit 14, More in bit 13). Returns 0 or a negative errno the block layer maps sensibly:
// capacity exceeded -> -ENOSPC, invalid field/opcode -> -EOPNOTSUPP, LBA out of range ->
// -EREMOTEIO, media errors -> -ENODATA, end-to-end protection -> -EILSEQ, reservation
// conflict -> -EBADE, path errors -> -ENOLINK, anything else -> -EIO.
[[nodiscard]] int device_result_to_errno(int result);

} // namespace kvfdp::daemon
