// RwQueue: IoQueue over plain io_uring file operations (file and streams backends).
#include "nvme/rw_queue.hpp"

#include <cerrno>
#include <cstring>
#include <liburing.h>
#include <linux/falloc.h>
#include <sys/ioctl.h>

#include "nvme/inflight.hpp"
#include "nvme/streams.hpp"

namespace kvfdp::nvme {

// BLOCK_URING_CMD_DISCARD (linux/blkdev.h, 6.12+; bookworm's headers lack it): an
// IORING_OP_URING_CMD on a block device that discards [sqe->addr, sqe->addr + sqe->addr3).
inline constexpr uint32_t kBlockUringCmdDiscard = 0x1200;
static_assert(kBlockUringCmdDiscard == _IO(0x12, 0));

namespace {

class RwQueue final : public IoQueue {
public:
	explicit RwQueue(const RwQueueSpec &s) : s_(s), expect_(s.depth) {}

	Prep prep(io_uring &ring, const IoRequest &req) override
	{
		if (req.op != IoOp::flush &&
		    (req.nlb == 0 || req.slba >= s_.nlb || req.nlb > s_.nlb - req.slba))
			return Prep{false, -EINVAL};
		const bool data = req.op == IoOp::read || req.op == IoOp::write;
		if (data && (req.nlb > s_.max_nlb || !req.buf))
			return Prep{false, -EINVAL};
		if (req.op == IoOp::write && s_.streams && req.handle >= s_.streams)
			return Prep{false, -EINVAL};
		const uint64_t off = req.slba * s_.lba_size;
		const uint64_t len = uint64_t{req.nlb} * s_.lba_size;
		if (data && !expect_.insert(req.user_data, static_cast<uint32_t>(len)))
			return Prep{false, -EBUSY};
		io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		if (!sqe) {
			uint32_t dummy;
			if (data)
				expect_.take(req.user_data, dummy);
			return Prep{false, -EBUSY};
		}
		const int fd = s_.fd;
		const auto n = static_cast<unsigned>(len);
		switch (req.op) {
		case IoOp::read:
			if (req.buf_index >= 0)
				io_uring_prep_read_fixed(sqe, fd, req.buf, n, off, req.buf_index);
			else
				io_uring_prep_read(sqe, fd, req.buf, n, off);
			break;
		case IoOp::write:
			if (req.buf_index >= 0)
				io_uring_prep_write_fixed(sqe, fd, req.buf, n, off, req.buf_index);
			else
				io_uring_prep_write(sqe, fd, req.buf, n, off);
			if (s_.streams)
				set_sqe_write_stream(sqe, stream_of_handle(req.handle, s_.streams));
			break;
		case IoOp::flush: io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC); break;
		case IoOp::deallocate:
			if (s_.discard == DiscardOp::block_discard) {
				// A plain 64-byte command (the ring may be SQE128).
				std::memset(sqe, 0, sizeof(*sqe));
				sqe->opcode = IORING_OP_URING_CMD;
				sqe->fd = fd;
				sqe->cmd_op = kBlockUringCmdDiscard;
				sqe->addr = off;
				sqe->addr3 = len;
			} else {
				io_uring_prep_fallocate(
					sqe, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					static_cast<off_t>(off), static_cast<off_t>(len));
			}
			break;
		case IoOp::write_zeroes:
			// On a block device (blkdev_fallocate) ZERO_RANGE issues Write Zeroes, or writes
			// zeroes where the device has none; KEEP_SIZE is required there.
			io_uring_prep_fallocate(sqe, fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
						static_cast<off_t>(off), static_cast<off_t>(len));
			break;
		}
		sqe->user_data = req.user_data;
		return Prep{true, 0};
	}

	int complete(const io_uring_cqe &cqe) override
	{
		uint32_t want;
		if (!expect_.empty() && expect_.take(cqe.user_data, want)) {
			if (cqe.res < 0)
				return cqe.res;
			return static_cast<uint32_t>(cqe.res) == want ? 0 : -EIO;  // short transfer
		}
		return cqe.res < 0 ? cqe.res : 0;
	}

private:
	RwQueueSpec s_;
	InflightMap<uint32_t> expect_;
};

}  // namespace

std::unique_ptr<IoQueue> make_rw_queue(const RwQueueSpec &spec)
{
	return std::make_unique<RwQueue>(spec);
}

RwQueueSpec rw_queue_spec(int fd, const DeviceInfo &info, const io_uring &ring)
{
	RwQueueSpec rs;
	rs.fd = fd;
	rs.lba_size = info.lba_size;
	rs.nlb = info.nlb;
	rs.max_nlb = info.max_transfer / info.lba_size;
	rs.depth = ring.cq.ring_entries ? ring.cq.ring_entries : 128;
	return rs;
}

std::vector<Handle> numbered_handles(uint16_t n, uint8_t ruht)
{
	std::vector<Handle> hs(n);
	for (uint16_t i = 0; i < n; ++i) {
		hs[i].index = i;
		hs[i].pid = i;
		hs[i].ruhid = i;
		hs[i].ruht = ruht;
	}
	return hs;
}

}  // namespace kvfdp::nvme
