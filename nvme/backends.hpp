// Factories for the nvme::Device backends in this directory: passthru, streams and file.
// (The model backend lives in model/ftl/.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "nvme/device.hpp"

namespace kvfdp::nvme {

// /dev/ngXnY with FDP enabled and at least one placement handle. I/O goes as
// IORING_OP_URING_CMD (NVME_URING_CMD_IO) into the caller's ring; handles() and log_page()
// use synchronous ioctls (admin on /dev/nvmeX) and may be called from any one thread.
[[nodiscard]] Result<std::unique_ptr<Device>> open_passthru_device(const std::string &ng_path);

// The passthru backend's I/O queue on its own: builds each request's NVMe command (placed
// writes with DTYPE/DSPEC = pids[handle]) as a uring_cmd SQE on ng_fd, which the caller
// keeps open. open_passthru_device's queues are these; the per-request bench drives one
// with ng_fd -1 on a ring that never reaches the kernel.
[[nodiscard]] std::unique_ptr<IoQueue>
make_passthru_queue(int ng_fd, const DeviceInfo &info, std::vector<uint16_t> pids, size_t depth);

// An NVMe namespace's block device (/dev/nvmeXnY) on a kernel with write streams (6.16+,
// queue/max_write_streams > 0): O_DIRECT io_uring reads and writes, each write on the stream
// of its handle (stream h + 1 = the namespace's RUH Status descriptor h: nvme/streams.hpp);
// flush is fsync, discard BLOCK_URING_CMD_DISCARD, write zeroes fallocate(ZERO_RANGE), all
// on the caller's ring. handles() and log_page() use NVME ioctls on the block device; RUH
// Update is ENOTSUP. No write streams: a one-line error that says to use --backend passthru.
[[nodiscard]] Result<std::unique_ptr<Device>>
open_streams_device(const std::string &path, const std::string &sysfs_root = "/sys");

struct FileDeviceOptions {
	uint32_t lba_size = 4096;
	uint64_t size_bytes = 0;  // grow the file to this size; 0: use its current size
	uint16_t nruh = 8;        // virtual handles reported by handles() (no placement)
	uint32_t max_transfer = 1u << 20;
};

// A regular file (created if missing) or block device. Writes ignore the handle; discard
// punches a hole, write zeroes uses FALLOC_FL_ZERO_RANGE, flush is fdatasync. log_page()
// returns ENOTSUP: a file has no FDP statistics.
[[nodiscard]] Result<std::unique_ptr<Device>> open_file_device(const std::string &path,
							       const FileDeviceOptions &opts);

}  // namespace kvfdp::nvme
