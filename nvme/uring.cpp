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

Result<UringPassthru> UringPassthru::create(unsigned entries)
{
	UringPassthru u;
	int ret = io_uring_queue_init(entries, &u.ring_, kPassthruRingFlags);
	if (ret < 0)
		return errno_error(ret,
				   "io_uring_queue_init with SQE128|CQE32 (needs Linux 5.19+)");
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

}  // namespace kvfdp::nvme
