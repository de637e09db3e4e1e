// Per-queue ublk helpers.
#include "kvfdpd/ublk/io_cmd.hpp"

#include <cerrno>
#include <cstring>
#include <liburing.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kvfdp::ublk {

int submit_and_reap_one(io_uring &ring)
{
	int ret = io_uring_submit(&ring);
	if (ret < 0)
		return ret;
	io_uring_cqe *cqe = nullptr;
	do {
		ret = io_uring_wait_cqe(&ring, &cqe);
	} while (ret == -EINTR);
	if (ret < 0)
		return ret;
	const int res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

void prep_io_cmd(io_uring_sqe &sqe, int char_fd, uint32_t cmd_op, uint16_t q_id, uint16_t tag,
		 int32_t result, uint64_t buf, uint64_t user_data, uint64_t sqe_addr)
{
	std::memset(&sqe, 0, 2 * sizeof(io_uring_sqe));  // SQE128
	sqe.opcode = IORING_OP_URING_CMD;
	sqe.fd = char_fd;
	sqe.cmd_op = cmd_op;
	sqe.addr = sqe_addr;
	sqe.user_data = user_data;
	IoCmd cmd{};
	cmd.q_id = q_id;
	cmd.tag = tag;
	cmd.result = result;
	cmd.addr = buf;
	std::memcpy(sqe.cmd, &cmd, sizeof(cmd));
}

void prep_batch_cmd(io_uring_sqe &sqe, int char_fd, uint32_t cmd_op, uint16_t q_id, uint16_t flags,
		    uint16_t nr_elem, uint8_t elem_bytes, const void *elems, uint64_t user_data)
{
	std::memset(&sqe, 0, 2 * sizeof(io_uring_sqe));  // SQE128
	sqe.opcode = IORING_OP_URING_CMD;
	sqe.fd = char_fd;
	sqe.cmd_op = cmd_op;
	sqe.addr = reinterpret_cast<uintptr_t>(elems);
	sqe.len = static_cast<uint32_t>(nr_elem) * elem_bytes;
	sqe.user_data = user_data;
	BatchIo cmd{};
	cmd.q_id = q_id;
	cmd.flags = flags;
	cmd.nr_elem = nr_elem;
	cmd.elem_bytes = elem_bytes;
	std::memcpy(sqe.cmd, &cmd, sizeof(cmd));
}

void prep_batch_fetch(io_uring_sqe &sqe, int char_fd, uint16_t q_id, uint16_t buf_group,
		      uint16_t max_tags, uint64_t user_data)
{
	std::memset(&sqe, 0, 2 * sizeof(io_uring_sqe));
	sqe.opcode = IORING_OP_URING_CMD;
	sqe.fd = char_fd;
	sqe.cmd_op = kUIoFetchIoCmds;
	sqe.flags = IOSQE_BUFFER_SELECT;
	sqe.buf_group = buf_group;
	sqe.uring_cmd_flags = kUringCmdMultishot;
	sqe.user_data = user_data;
	BatchIo cmd{};
	cmd.q_id = q_id;
	cmd.nr_elem = max_tags;
	cmd.elem_bytes = sizeof(uint16_t);
	std::memcpy(sqe.cmd, &cmd, sizeof(cmd));
}

Result<DescMap> DescMap::map(int char_fd, uint16_t q_id, uint16_t depth)
{
	const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	// The driver places queue q's array at q * (the array size of the largest depth).
	const off_t off =
		static_cast<off_t>(kCmdBufOffset + q_id * io_desc_bytes(kMaxQueueDepth, page));
	const size_t bytes = io_desc_bytes(depth, page);
	void *p = mmap(nullptr, bytes, PROT_READ, MAP_SHARED | MAP_POPULATE, char_fd, off);
	if (p == MAP_FAILED)
		return errno_error(errno, "mmap ublk descriptors of queue " + std::to_string(q_id));
	DescMap m;
	m.descs_ = static_cast<const IoDesc *>(p);
	m.bytes_ = bytes;
	return m;
}

DescMap &DescMap::operator=(DescMap &&o) noexcept
{
	if (this != &o) {
		if (descs_)
			munmap(const_cast<IoDesc *>(descs_), bytes_);
		descs_ = o.descs_;
		bytes_ = o.bytes_;
		o.descs_ = nullptr;
	}
	return *this;
}

DescMap::~DescMap()
{
	if (descs_)
		munmap(const_cast<IoDesc *>(descs_), bytes_);
}

}  // namespace kvfdp::ublk
