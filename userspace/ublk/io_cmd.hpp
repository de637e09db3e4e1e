// Per-queue ublk helpers: fill a FETCH_REQ / COMMIT_AND_FETCH_REQ SQE, map a queue's
// descriptor array.
#pragma once

#include <cstdint>

#include "common/result.hpp"
#include "userspace/ublk/uapi.hpp"

struct io_uring_sqe;

namespace kvfdp::ublk {

// Fills a 128-byte SQE: IORING_OP_URING_CMD on char_fd with an IoCmd for (q_id, tag).
// result is the COMMIT result (ignored by FETCH); buf the tag's data buffer (copy mode; 0 in
// zero-copy mode); sqe_addr goes to sqe->addr: auto_buf_reg_addr(slot) on a kFlagAutoBufReg
// device, else 0.
void prep_io_cmd(io_uring_sqe &sqe, int char_fd, uint32_t cmd_op, uint16_t q_id, uint16_t tag,
		 int32_t result, uint64_t buf, uint64_t user_data, uint64_t sqe_addr = 0);

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

} // namespace kvfdp::ublk
