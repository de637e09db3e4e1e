// A synchronous, split read/write over a UringPassthru ring, for the guest-side check
// (vmcheck) only: kvfdpd's data path is the IoQueue and the engine's own split loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "nvme/uring.hpp"

namespace kvfdp::test {

// One piece of a split I/O: blocks [slba, slba + nlb) at byte offset buf_offset of the
// caller's buffer.
struct IoChunk {
	uint64_t slba = 0;
	uint32_t nlb = 0;
	uint64_t buf_offset = 0;
};

// Splits nlb blocks at slba into pieces of at most max_nlb blocks (also capped at
// nvme::kMaxNlb, the NLB field's range). Writes up to out.size() chunks and returns how many
// the whole I/O needs (which may be more than out.size(): call again for the rest). Pure.
size_t split_io(uint64_t slba, uint64_t nlb, uint32_t max_nlb, uint32_t lba_size,
		std::span<IoChunk> out);

// Reads or writes nlb blocks of lba_size at slba through buf on u, split into commands of
// at most max_transfer bytes, submitted in batches. A write with pid >= 0 is placed.
// Returns 0, the first NVMe status, or -errno.
int sync_rw(nvme::UringPassthru &u, int fd, uint32_t nsid, bool write, uint64_t slba, uint64_t nlb,
	    void *buf, uint32_t lba_size, uint32_t max_transfer, int pid = -1);

}  // namespace kvfdp::test
