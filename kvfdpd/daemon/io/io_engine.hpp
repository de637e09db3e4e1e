// IoEngine: what one queue does with each ublk request, independent of the ublk driver:
// decode the descriptor, classify writes by tag slot, map class -> handle, split at the
// transfer limit and at stripe unit ends (each piece to its member at its member LBA; flush,
// discard and write zeroes to every member), prep device commands on the queue's ring, gather
// completions (a request finishes when all its pieces have; the first error fails it) and
// hand the result to a Committer. No allocation, locks or logging per request, and no syscall but one:
// when the SQ is full, the engine submits what is queued (one io_uring_enter) and retries.
#pragma once

#include <cstdint>
#include <memory>

#include "nvme/device.hpp"
#include "nvme/stripe.hpp"
#include "kvfdpd/daemon/io/queue_counters.hpp"
#include "kvfdpd/daemon/policy_table.hpp"
#include "kvfdpd/daemon/io/write_class.hpp"
#include "model/twin/ring.hpp"
#include "kvfdpd/ublk/uapi.hpp"

struct io_uring;
struct io_uring_cqe;

namespace kvfdp::daemon {

class LearnedPlacement;

// Receives finished requests: result is bytes done (read/write), 0, or -errno.
class Committer {
public:
	virtual ~Committer() = default;
	virtual void commit(uint16_t tag, int result) = 0;
};

struct EngineConfig {
	uint16_t depth = 64;
	uint32_t io_buf_bytes =
		512 * 1024;  // largest read/write request (per tag buffer in copy mode)
	uint32_t lba_size = 4096;
	uint32_t max_transfer = 512 * 1024;  // bytes per device command
	uint64_t nlb = 0;                    // device size in LBAs (a stripe's: all members)
	// Several members (nvme::StripeDevice): where each logical LBA lives. One member: the
	// identity, and every command goes to member 0.
	nvme::StripeLayout stripe;
	uint16_t nruh = 0;  // handles; 0 = no placement (all handle 0)
	bool fixed_buffers =
		true;  // copy mode: the tag buffers are registered in the ring, index = tag
	// Zero copy (UBLK_F_AUTO_BUF_REG): the driver registers each read/write request's own pages
	// as the ring's fixed buffer <tag>; device commands address them by byte offset, and no
	// tag buffers exist (bufs is unused). Else copy mode: the driver copies each request into
	// or out of bufs[tag], counted in QueueCounters::copied_bytes.
	bool zero_copy = false;
	// --placement learned: writes go where the learner puts their (writer, class), and
	// discards tell it what died (learned.hpp); nullptr: the class map.
	LearnedPlacement *learned = nullptr;
	// The live WAF twin's ring of this queue (model/twin/): each write with its handle,
	// discard and write zeroes is pushed there; nullptr: no twin.
	twin::Ring *twin = nullptr;
};

// The op of a ublk request (ublksrv_io_desc op_flags bits 7:0, ublk::kOp*): the one place
// it is decoded.
[[nodiscard]] constexpr uint8_t request_op(const ublk::IoDesc &d)
{
	return static_cast<uint8_t>(d.op_flags & 0xff);
}
// Reads and writes carry data (a tag buffer, or in zero copy the request's registered pages).
[[nodiscard]] constexpr bool carries_data(uint8_t op)
{
	return op == ublk::kOpRead || op == ublk::kOpWrite;
}

class IoEngine {
public:
	// bufs[tag] is each tag's buffer of io_buf_bytes (copy mode; may be null in zero-copy
	// mode). All references must outlive the engine.
	IoEngine(const EngineConfig &cfg, io_uring &ring, nvme::IoQueue &ioq,
		 const ublk::IoDesc *descs, uint8_t *const *bufs, bpf::SlotReader &tags,
		 const PolicyTable &policy, QueueCounters &ctr, Committer &committer);

	// Most device commands one request can need under cfg: what the queue's ring is sized by.
	[[nodiscard]] static uint32_t max_subs_per_request(const EngineConfig &cfg);

	// The request of tag arrived (its FETCH / COMMIT_AND_FETCH completed with OK).
	void start(uint16_t tag);
	// A CQE whose user_data is UdKind::device.
	void on_device_cqe(const io_uring_cqe &cqe);
	// Device commands queued and not yet completed.
	[[nodiscard]] uint32_t device_inflight() const { return inflight_; }

private:
	struct TagState {
		uint16_t pending = 0;     // device commands outstanding
		int32_t error = 0;        // first error (negative errno)
		uint32_t done_bytes = 0;  // result on success
	};
	// A request as start() reads it from its descriptor.
	struct Request {
		uint8_t op = 0;     // ublk::kOp*
		bool data = false;  // read or write (carries_data)
		bool ranged =
			false;  // data, discard or write zeroes: its LBAs must lie on the device
		uint64_t slba = 0;
		uint32_t nlb = 0;
		uint64_t bytes = 0;
	};
	// start()'s steps, in the order a write takes them (io_engine.cpp, docs/daemon.md).
	[[nodiscard]] Request decode(const ublk::IoDesc &d) const;
	// Sets req's command for r's op and counts it (per_cmd: write zeroes' own limit);
	// false for an op the engine does not serve.
	[[nodiscard]] bool classify_and_place(uint16_t tag, const ublk::IoDesc &d, const Request &r,
					      nvme::IoRequest &req, uint32_t &per_cmd);
	// With cfg.twin: pushes a write (with req's handle), discard or write zeroes to the twin.
	void record_twin(const Request &r, const nvme::IoRequest &req);
	// A write's handle: its class from the tag slot, then the learner or the class map.
	[[nodiscard]] uint16_t place_write(uint16_t tag, const ublk::IoDesc &d, const Request &r);
	// A read/write's buffer: sets req.buf_index, returns where its data starts (0: zero copy).
	[[nodiscard]] uintptr_t attach_data(uint16_t tag, const Request &r, nvme::IoRequest &req);
	// Preps r as device commands of at most per_cmd LBAs: split_pieces() cuts a read/write
	// (or anything on one member) at stripe unit ends, split_members() fans the rest out to
	// every member of a stripe.
	void split(uint16_t tag, const Request &r, nvme::IoRequest &req, uint32_t per_cmd,
		   uintptr_t base);
	void split_pieces(uint16_t tag, const Request &r, nvme::IoRequest &req, uint32_t per_cmd,
			  uintptr_t base);
	void split_members(uint16_t tag, const Request &r, nvme::IoRequest &req, uint32_t per_cmd);
	// Preps one device command; an inline completion is folded in at once.
	void submit_sub(uint16_t tag, const nvme::IoRequest &req);
	void sub_done(uint16_t tag, int result);
	void finish_if_done(uint16_t tag);

	EngineConfig cfg_;
	io_uring &ring_;
	nvme::IoQueue &ioq_;
	const ublk::IoDesc *descs_;
	uint8_t *const *bufs_;
	bpf::SlotReader &tags_;
	const PolicyTable &policy_;
	QueueCounters &ctr_;
	Committer &committer_;
	std::unique_ptr<TagState[]> state_;
	uint32_t inflight_ = 0;
	uint32_t lba_shift_ = 12;  // log2(lba_size) - 9: sectors -> LBAs
	uint32_t max_nlb_ = 128;   // LBAs per read/write command
};

}  // namespace kvfdp::daemon
