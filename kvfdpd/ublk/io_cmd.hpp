// Per-queue ublk helpers: fill a FETCH_REQ / COMMIT_AND_FETCH_REQ SQE or a batch command's
// (UBLK_F_BATCH_IO), map a queue's descriptor array.
#pragma once

#include <cstdint>

#include "common/result.hpp"
#include "kvfdpd/ublk/uapi.hpp"

struct io_uring;
struct io_uring_sqe;

namespace kvfdp::ublk {

// Fills a 128-byte SQE: IORING_OP_URING_CMD on char_fd with an IoCmd for (q_id, tag).
// result is the COMMIT result (ignored by FETCH); buf the tag's data buffer (copy mode; 0 in
// zero-copy mode); sqe_addr goes to sqe->addr: auto_buf_reg_addr(slot) on a kFlagAutoBufReg
// device, else 0.
void prep_io_cmd(io_uring_sqe &sqe, int char_fd, uint32_t cmd_op, uint16_t q_id, uint16_t tag,
		 int32_t result, uint64_t buf, uint64_t user_data, uint64_t sqe_addr = 0);

// Submits what ring has queued and waits (through EINTR) for one completion: its res, or the
// negative errno of the submit or the wait. For rings with one command in flight (control
// commands, a queue's PREP before its loop starts), never the I/O loop.
[[nodiscard]] int submit_and_reap_one(io_uring &ring);

// Fills a 128-byte SQE with a batch command (kFlagBatchIo): cmd_op PREP_IO_CMDS or
// COMMIT_IO_CMDS over nr_elem elements of elem_bytes at elems (which must stay untouched until
// the command's completion), with flags kBatchFHasBufAddr in copy mode.
void prep_batch_cmd(io_uring_sqe &sqe, int char_fd, uint32_t cmd_op, uint16_t q_id, uint16_t flags,
		    uint16_t nr_elem, uint8_t elem_bytes, const void *elems, uint64_t user_data);

// Fills a 128-byte SQE with the multishot FETCH_IO_CMDS of queue q_id: each completion puts up
// to max_tags u16 tags in a buffer of provided-buffer group buf_group.
void prep_batch_fetch(io_uring_sqe &sqe, int char_fd, uint16_t q_id, uint16_t buf_group,
		      uint16_t max_tags, uint64_t user_data);

// Writes element i of a PREP / COMMIT array of elem_bytes elements (sizeof(BatchElem) also
// stores buf_addr, sizeof(BatchElemHeader) does not).
inline void put_batch_elem(void *elems, uint8_t elem_bytes, unsigned i, uint16_t tag,
			   uint16_t buf_index, int32_t result, uint64_t buf_addr)
{
	auto *e = reinterpret_cast<BatchElem *>(static_cast<uint8_t *>(elems) +
						static_cast<size_t>(i) * elem_bytes);
	e->header = BatchElemHeader{tag, buf_index, result};
	if (elem_bytes == sizeof(BatchElem))
		e->buf_addr = buf_addr;
}

// The read-only IoDesc array of queue q_id (depth entries), mmapped from /dev/ublkcN.
class DescMap {
public:
	[[nodiscard]] static Result<DescMap> map(int char_fd, uint16_t q_id, uint16_t depth);
	DescMap() = default;
	DescMap(DescMap &&o) noexcept : descs_(o.descs_), bytes_(o.bytes_) { o.descs_ = nullptr; }
	DescMap &operator=(DescMap &&o) noexcept;
	DescMap(const DescMap &) = delete;
	DescMap &operator=(const DescMap &) = delete;
	~DescMap();
	[[nodiscard]] const IoDesc *descs() const { return descs_; }

private:
	const IoDesc *descs_ = nullptr;
	size_t bytes_ = 0;
};

}  // namespace kvfdp::ublk
