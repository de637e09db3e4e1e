// Block-layer write streams (Linux 6.16+): the io_uring SQE's write_stream byte, the kernel's
// stream numbering of an FDP namespace's placement handles, and the sysfs check that decides
// whether --backend streams can run. Pure except read_write_streams (reads sysfs).
#pragma once

#include <liburing.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/result.hpp"

namespace kvfdp::nvme {

// io_uring_sqe.write_stream (u8, Linux 6.16) shares the union at byte 44 with splice_fd_in /
// file_index. liburing 2.3 (bookworm) has no field for it, so it is set by offset; the offset
// is checked against liburing's own file_index, which the kernel's union puts there too.
inline constexpr size_t kSqeWriteStreamOffset = 44;
static_assert(offsetof(io_uring_sqe, file_index) == kSqeWriteStreamOffset,
	      "io_uring_sqe: write_stream shares the 4-byte union at byte 44 (file_index)");
static_assert(sizeof(io_uring_sqe) == 64);

// Sets the SQE's write stream (0: none). Call after io_uring_prep_*, which zero the union.
inline void set_sqe_write_stream(io_uring_sqe *sqe, uint8_t stream)
{
	reinterpret_cast<uint8_t *>(sqe)[kSqeWriteStreamOffset] = stream;
}

// The stream of kvfdp handle index h: the NVMe driver (drivers/nvme/host/core.c,
// nvme_setup_rw) places stream s on plids[s - 1], and fills plids in RUH Status descriptor
// order, which is kvfdp's handle order; stream 0 is "no placement". 0 when h has no stream.
[[nodiscard]] constexpr uint8_t stream_of_handle(uint16_t h, uint16_t max_streams)
{
	return h < max_streams && h < 255 ? static_cast<uint8_t>(h + 1) : 0;
}

// What /sys/block/<disk>/queue says about write streams.
struct WriteStreams {
	uint16_t max_streams = 0;  // max_write_streams
	uint64_t granularity = 0;  // write_stream_granularity, bytes (the RU size); 0: unknown
};

// Reads /sys/block/<block_name>/queue/{max_write_streams,write_stream_granularity} under
// sysfs_root ("/sys" except in tests). No such attribute (a kernel before 6.16) or 0 streams
// (no FDP, FDP off, or more than one reclaim group) is an error of one line that says to use
// --backend passthru.
[[nodiscard]] Result<WriteStreams> read_write_streams(const std::string &block_name,
						      const std::string &sysfs_root = "/sys");

}  // namespace kvfdp::nvme
