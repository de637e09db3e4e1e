// io_uring NVMe passthrough: SQE preparation for IORING_OP_URING_CMD and the UringPassthru
// ring (SQE128 | CQE32, registered buffers, batching, dispatch by user_data, one command run
// synchronously).
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
	template <class F> int reap(unsigned min_complete, F &&on_cqe)
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
		io_uring_for_each_cqe(&ring_, head, cqe)
		{
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

private:
	UringPassthru() = default;
	io_uring ring_{};
	unsigned entries_ = 0;
	bool live_ = false;
};

}  // namespace kvfdp::nvme
