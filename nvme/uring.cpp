// io_uring passthrough ring and SQE preparation.
#include "nvme/uring.hpp"

#include <cerrno>
#include <cstring>
#include <linux/nvme_ioctl.h>

#include "nvme/commands.hpp"

namespace kvfdp::nvme {

static_assert(sizeof(UringCmd) == sizeof(struct nvme_uring_cmd));
static_assert(kUringCmdIo == NVME_URING_CMD_IO);
static_assert(kUringCmdAdmin == NVME_URING_CMD_ADMIN);

void prep_uring_cmd(io_uring_sqe *sqe, int fd, uint32_t cmd_op, const UringCmd &cmd,
		    uint64_t user_data, int buf_index)
{
	std::memset(sqe, 0, 2 * sizeof(io_uring_sqe));  // SQE128: both halves
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
	sqe->user_data = user_data;
	if (buf_index >= 0) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = static_cast<uint16_t>(buf_index);
	}
	std::memcpy(sqe->cmd, &cmd, sizeof(cmd));
}

size_t split_io(uint64_t slba, uint64_t nlb, uint32_t max_nlb, uint32_t lba_size,
		std::span<IoChunk> out)
{
	if (max_nlb == 0 || max_nlb > kMaxNlb)
		max_nlb = kMaxNlb;
	size_t need = static_cast<size_t>((nlb + max_nlb - 1) / max_nlb);
	uint64_t done = 0;
	for (size_t i = 0; i < need && i < out.size(); ++i) {
		uint64_t left = nlb - done;
		uint32_t n = left < max_nlb ? static_cast<uint32_t>(left) : max_nlb;
		out[i] = IoChunk{slba + done, n, done * lba_size};
		done += n;
	}
	return need;
}

Result<UringPassthru> UringPassthru::create(unsigned entries)
{
	UringPassthru u;
	int ret = io_uring_queue_init(entries, &u.ring_, kPassthruRingFlags);
	if (ret < 0)
		return errno_error(ret, "io_uring_queue_init with SQE128|CQE32 (needs Linux 5.19+)");
	u.entries_ = entries;
	u.live_ = true;
	return u;
}

UringPassthru::UringPassthru(UringPassthru &&o) noexcept
	: ring_(o.ring_), entries_(o.entries_), live_(o.live_)
{
	o.live_ = false;
}

UringPassthru::~UringPassthru()
{
	if (live_)
		io_uring_queue_exit(&ring_);
}

int UringPassthru::register_buffers(std::span<const iovec> bufs)
{
	return io_uring_register_buffers(&ring_, bufs.data(), static_cast<unsigned>(bufs.size()));
}

int UringPassthru::unregister_buffers()
{
	return io_uring_unregister_buffers(&ring_);
}

bool UringPassthru::queue(int fd, uint32_t cmd_op, const UringCmd &cmd, uint64_t user_data,
			  int buf_index)
{
	io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
	if (!sqe)
		return false;
	prep_uring_cmd(sqe, fd, cmd_op, cmd, user_data, buf_index);
	return true;
}

int UringPassthru::submit()
{
	return io_uring_submit(&ring_);
}

int UringPassthru::run(int fd, uint32_t cmd_op, const UringCmd &cmd, uint32_t *dw0)
{
	constexpr uint64_t kSyncTag = ~uint64_t{0};
	if (!queue(fd, cmd_op, cmd, kSyncTag)) {
		int s = submit();
		if (s < 0)
			return s;
		if (!queue(fd, cmd_op, cmd, kSyncTag))
			return -EBUSY;
	}
	int s = submit();
	if (s < 0)
		return s;
	int result = -EIO;
	bool seen = false;
	while (!seen) {
		int r = reap(1, [&](uint64_t ud, int res, uint32_t d0) {
			if (ud == kSyncTag) {
				seen = true;
				result = res;
				if (dw0)
					*dw0 = d0;
			}
		});
		if (r < 0 && r != -EINTR)
			return r;
	}
	return result;
}

int UringPassthru::rw(int fd, uint32_t nsid, bool write, uint64_t slba, uint64_t nlb, void *buf,
		      uint32_t lba_size, uint32_t max_transfer, int pid)
{
	if (lba_size == 0 || nlb == 0)
		return -EINVAL;
	uint32_t max_nlb = max_transfer / lba_size;
	if (max_nlb == 0)
		return -EINVAL;
	IoChunk chunks[32];
	auto *base = static_cast<uint8_t *>(buf);
	uint64_t done = 0;
	int first_error = 0;
	while (done < nlb) {
		size_t total = split_io(slba + done, nlb - done, max_nlb, lba_size, chunks);
		size_t batch = total < 32 ? total : 32;
		if (batch > entries_)
			batch = entries_;
		size_t queued = 0;
		for (size_t i = 0; i < batch; ++i) {
			const IoChunk &c = chunks[i];
			uint8_t *p = base + done * lba_size + c.buf_offset;
			uint32_t len = c.nlb * lba_size;
			UringCmd cmd = write ? make_write(nsid, c.slba, c.nlb, p, len,
							  pid >= 0 ? std::optional<uint16_t>(
									     static_cast<uint16_t>(pid))
								   : std::nullopt)
					     : make_read(nsid, c.slba, c.nlb, p, len);
			if (!queue(fd, kUringCmdIo, cmd, i))
				break;
			++queued;
		}
		int s = submit();
		if (s < 0)
			return s;
		size_t completed = 0;
		while (completed < queued) {
			int r = reap(1, [&](uint64_t, int res, uint32_t) {
				++completed;
				if (res != 0 && first_error == 0)
					first_error = res;
			});
			if (r < 0 && r != -EINTR)
				return r;
		}
		if (first_error)
			return first_error;
		for (size_t i = 0; i < queued; ++i)
			done += chunks[i].nlb;
	}
	return 0;
}

} // namespace kvfdp::nvme
