// io_uring NVMe passthrough: SQE preparation for IORING_OP_URING_CMD, the UringPassthru
// ring (SQE128 | CQE32, registered buffers, batching, dispatch by user_data, a synchronous
// helper), and splitting of I/O larger than the transfer limit.
#pragma once

#include <liburing.h>

#include <cstdint>
#include <span>
#include <sys/uio.h>

#include "common/result.hpp"
#include "nvme/spec.hpp"

namespace kvfdp::nvme {

// The ring flags passthrough needs: without them uring_cmd fails with -EOPNOTSUPP.
inline constexpr unsigned kPassthruRingFlags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;

// Fills a 128-byte SQE for cmd on fd (an NVMe char device). cmd_op is kUringCmdIo (for
// /dev/ngXnY) or kUringCmdAdmin (for /dev/nvmeX only). buf_index >= 0 names a buffer
// registered on the ring, which must contain [cmd.addr, cmd.addr + cmd.data_len).
// The ring must have been created with kPassthruRingFlags. No syscall.
void prep_uring_cmd(io_uring_sqe *sqe, int fd, uint32_t cmd_op, const UringCmd &cmd,
		    uint64_t user_data, int buf_index = -1);

// The NVMe completion dword 0 of a passthrough CQE (CQE32 big_cqe[0], low 32 bits).
[[nodiscard]] inline uint32_t cqe_result_dw0(const io_uring_cqe &cqe)
{
	return static_cast<uint32_t>(cqe.big_cqe[0]);
}

// One piece of a split I/O: blocks [slba, slba + nlb) at byte offset buf_offset of the
// caller's buffer.
struct IoChunk {
	uint64_t slba = 0;
	uint32_t nlb = 0;
	uint64_t buf_offset = 0;
};

// Splits nlb blocks at slba into pieces of at most max_nlb blocks (also capped at kMaxNlb,
// the NLB field's range). Writes up to out.size() chunks and returns how many the whole
// I/O needs (which may be more than out.size(): call again for the rest). Pure.
size_t split_io(uint64_t slba, uint64_t nlb, uint32_t max_nlb, uint32_t lba_size,
		std::span<IoChunk> out);

// A passthrough ring of its own (for discovery, the CLI and tests; kvfdpd's queue threads
// use their own rings through IoQueue). Single-threaded.
class UringPassthru {
public:
	// A ring of `entries` SQEs with SQE128 | CQE32.
	[[nodiscard]] static Result<UringPassthru> create(unsigned entries = 64);
	UringPassthru(UringPassthru &&o) noexcept;
	UringPassthru &operator=(UringPassthru &&) = delete;
	UringPassthru(const UringPassthru &) = delete;
	~UringPassthru();

	[[nodiscard]] io_uring &ring() { return ring_; }
	[[nodiscard]] unsigned entries() const { return entries_; }

	// Registers buffers for IORING_URING_CMD_FIXED (index = position); 0 or -errno.
	int register_buffers(std::span<const iovec> bufs);
	int unregister_buffers();

	// Queues one command without submitting; false when the SQ is full (submit first).
	bool queue(int fd, uint32_t cmd_op, const UringCmd &cmd, uint64_t user_data,
		   int buf_index = -1);
	// Submits everything queued; returns the count or -errno.
	int submit();
	// Waits for at least min_complete completions (0: only what is ready) and calls
	// on_cqe(user_data, res, dw0) for each; res is 0, an NVMe status or -errno.
	// Returns the number dispatched or -errno.
	template <class F>
	int reap(unsigned min_complete, F &&on_cqe)
	{
		int done = 0;
		io_uring_cqe *cqe = nullptr;
		if (min_complete > 0) {
			int ret = io_uring_wait_cqe_nr(&ring_, &cqe, min_complete);
			if (ret < 0)
				return ret;
		}
		unsigned head;
		unsigned n = 0;
		io_uring_for_each_cqe(&ring_, head, cqe) {
			on_cqe(cqe->user_data, cqe->res, cqe_result_dw0(*cqe));
			++n;
		}
		io_uring_cq_advance(&ring_, n);
		done += static_cast<int>(n);
		return done;
	}

	// Submits one command and waits for it. Returns 0, an NVMe status or -errno; dw0
	// receives completion dword 0 when non-null.
	int run(int fd, uint32_t cmd_op, const UringCmd &cmd, uint32_t *dw0 = nullptr);

	// Read or write nlb blocks of lba_size at slba through buf, split into commands of at
	// most max_transfer bytes, submitted in batches. write with pid >= 0 is placed.
	// Returns 0, the first NVMe status, or -errno.
	int rw(int fd, uint32_t nsid, bool write, uint64_t slba, uint64_t nlb, void *buf,
	       uint32_t lba_size, uint32_t max_transfer, int pid = -1);

private:
	UringPassthru() = default;
	io_uring ring_{};
	unsigned entries_ = 0;
	bool live_ = false;
};

} // namespace kvfdp::nvme
