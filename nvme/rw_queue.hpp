// RwQueue: the IoQueue of the backends that do I/O as plain io_uring read/write/fsync/
// fallocate on a file descriptor (file: a regular file or block device, no placement;
// streams: an NVMe block device, each write on its handle's write stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "nvme/device.hpp"

namespace kvfdp::nvme {

// How a deallocate goes: fallocate(PUNCH_HOLE) (a file) or BLOCK_URING_CMD_DISCARD (a block
// device, Linux 6.12+).
enum class DiscardOp : uint8_t { punch_hole, block_discard };

struct RwQueueSpec {
	int fd = -1;  // kept open by the device
	uint32_t lba_size = 0;
	uint64_t nlb = 0;      // LBAs
	uint32_t max_nlb = 0;  // blocks per request
	uint16_t streams = 0;  // > 0: handle h writes on stream h + 1 and h must be < streams;
			       // 0: writes carry no stream and any handle is accepted
	DiscardOp discard = DiscardOp::punch_hole;
	size_t depth = 128;  // requests in flight
};

// Reads and writes (fixed-buffer ones too) must transfer every byte: a short one is -EIO.
// Write zeroes is fallocate(ZERO_RANGE | KEEP_SIZE), flush fsync(DATASYNC).
[[nodiscard]] std::unique_ptr<IoQueue> make_rw_queue(const RwQueueSpec &spec);

// The spec of a device's queue on ring: info's geometry and max_transfer, depth from the
// ring's CQ (128 when unknown).
[[nodiscard]] RwQueueSpec rw_queue_spec(int fd, const DeviceInfo &info, const io_uring &ring);

// Handles 0..n-1 known by number alone (pid = ruhid = index, ruht as given): what a backend
// reports where no RUH Status can be read.
[[nodiscard]] std::vector<Handle> numbered_handles(uint16_t n, uint8_t ruht = 0);

}  // namespace kvfdp::nvme
