// BenchRig: kvfdpd's per-request path (IoEngine, the queue loop's CQE dispatch and its
// COMMIT_AND_FETCH prep) and the passthru backend's own IoQueue, served by a loopback io_uring
// that completes every command, for the
// instruction/allocation bench and its zero-allocation unit test. A mock, because this host
// has no ublk driver: the rig plays the kernel (ublk driver + NVMe) in user memory, so a run
// makes no syscall and its instruction count is deterministic. The real path runs in the
// daemon_* VM scenarios.
#pragma once

#include <liburing.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "bpf/tag.h"
#include "nvme/backends.hpp"
#include "nvme/device.hpp"
#include "nvme/stripe.hpp"
#include "nvme/uring.hpp"
#include "kvfdpd/daemon/io/queue_counters.hpp"
#include "kvfdpd/daemon/io/io_engine.hpp"
#include "kvfdpd/daemon/policy_table.hpp"
#include "kvfdpd/daemon/io/user_data.hpp"
#include "kvfdpd/daemon/io/write_class.hpp"
#include "kvfdpd/ublk/io_cmd.hpp"
#include "kvfdpd/ublk/uapi.hpp"

namespace kvfdp::test {

// An io_uring (SQE128 | CQE32) whose rings live in ordinary memory: liburing's inline
// helpers (io_uring_get_sqe, io_uring_for_each_cqe, io_uring_cq_advance) work on it as on
// a kernel ring, and the owner plays the kernel with take_sqe() / post_cqe(). Nothing may
// call io_uring_submit() or io_uring_enter() on it (there is no ring fd).
class LoopbackRing {
public:
	explicit LoopbackRing(unsigned entries)
	    : sqes_(new io_uring_sqe[2 * static_cast<size_t>(entries)]()),
	      cqes_(new io_uring_cqe[4 * static_cast<size_t>(entries)]())
	{
		ring_.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
		ring_.ring_fd = -1;
		ring_.enter_ring_fd = -1;
		sq_entries_ = entries;
		cq_entries_ = 2 * entries;
		ring_.sq.khead = &sq_head_;
		ring_.sq.ktail = &sq_ktail_;
		ring_.sq.kring_mask = &sq_mask_;
		ring_.sq.kring_entries = &sq_entries_;
		ring_.sq.kflags = &sq_flags_;
		ring_.sq.kdropped = &sq_dropped_;
		ring_.sq.sqes = sqes_.get();
		ring_.sq.ring_mask = sq_mask_ = entries - 1;
		ring_.sq.ring_entries = entries;
		ring_.cq.khead = &cq_head_;
		ring_.cq.ktail = &cq_tail_;
		ring_.cq.kring_mask = &cq_mask_;
		ring_.cq.kring_entries = &cq_entries_;
		ring_.cq.kflags = &cq_flags_;
		ring_.cq.koverflow = &cq_overflow_;
		ring_.cq.cqes = cqes_.get();
		ring_.cq.ring_mask = cq_mask_ = 2 * entries - 1;
		ring_.cq.ring_entries = 2 * entries;
	}
	LoopbackRing(const LoopbackRing &) = delete;
	LoopbackRing &operator=(const LoopbackRing &) = delete;

	[[nodiscard]] io_uring &ring() { return ring_; }
	// The next SQE the user prepared (what a submit would hand the kernel), or nullptr.
	const io_uring_sqe *take_sqe()
	{
		if (sq_head_ == ring_.sq.sqe_tail)
			return nullptr;
		const io_uring_sqe *s = &sqes_[static_cast<size_t>(sq_head_ & sq_mask_) << 1];
		sq_head_++;
		ring_.sq.sqe_head = sq_head_;
		return s;
	}
	// Posts a 32-byte CQE; false (and counted) when the CQ is full, as an overflow.
	bool post_cqe(uint64_t user_data, int32_t res, uint64_t dw0 = 0)
	{
		if (cq_tail_ - cq_head_ >= cq_entries_) {
			cq_overflow_++;
			return false;
		}
		io_uring_cqe *c = &cqes_[static_cast<size_t>(cq_tail_ & cq_mask_) << 1];
		c->user_data = user_data;
		c->res = res;
		c->flags = 0;
		c->big_cqe[0] = dw0;
		c->big_cqe[1] = 0;
		__atomic_store_n(&cq_tail_, cq_tail_ + 1, __ATOMIC_RELEASE);
		return true;
	}
	[[nodiscard]] unsigned cq_overflow() const { return cq_overflow_; }

private:
	io_uring ring_{};
	std::unique_ptr<io_uring_sqe[]> sqes_;  // 2 per entry (SQE128)
	std::unique_ptr<io_uring_cqe[]> cqes_;  // 2 per entry (CQE32)
	unsigned sq_head_ = 0, sq_ktail_ = 0, sq_mask_ = 0, sq_entries_ = 0, sq_flags_ = 0,
		 sq_dropped_ = 0;
	unsigned cq_head_ = 0, cq_tail_ = 0, cq_mask_ = 0, cq_entries_ = 0, cq_flags_ = 0,
		 cq_overflow_ = 0;
};

// One request the rig's "driver" hands to a tag: ublk op, range, the class the tagger
// wrote for it (KVFDP_NR_CLASSES: no slot written, i.e. untagged).
struct RigRequest {
	uint8_t op = ublk::kOpWrite;
	uint64_t sector = 0;
	uint32_t sectors = 0;
	uint8_t cls = KVFDP_NR_CLASSES;
	uint32_t writer = 0;  // the tagger's writer id in the slot (learned placement keys on it)
};

struct RigConfig {
	uint16_t depth = 64;                 // kvfdpd's default --depth
	uint32_t io_buf_bytes = 512 * 1024;  // kvfdpd's default --io-buf-bytes
	uint32_t lba_size = 4096;
	uint32_t max_transfer = 512 * 1024;  // QEMU's NVMe MDTS in the VM scenarios
	uint64_t nlb = 1u << 18;             // 1 GiB
	uint16_t nruh = 8;
	bool zero_copy = false;  // the request's registered pages instead of tag buffers
	uint32_t members = 1;    // > 1: a stripe of passthru queues (nvme/stripe.hpp), nlb in all
	uint32_t stripe_bytes = 64 * 1024;            // with members > 1
	daemon::LearnedPlacement *learned = nullptr;  // --placement learned (bench_learned.hpp)
	twin::Ring *twin = nullptr;                   // the live WAF twin's ring (model/twin/)
};

// The queue loop of one ublk queue (UblkQueue::run's CQE dispatch, UblkQueue::commit's
// SQE) over a LoopbackRing. gen(i) gives request i; serve(n) runs n requests to completion.
template <class Gen> class BenchRig final : public daemon::Committer {
public:
	BenchRig(const RigConfig &rc, Gen gen)
	    : rc_(rc), gen_(gen), lring_(ring_entries(rc)), descs_(rc.depth), slots_(rc.depth),
	      buf_area_(new uint8_t[static_cast<size_t>(rc.depth) * rc.io_buf_bytes]),
	      bufs_(rc.depth), expect_(rc.depth),
	      reader_(daemon::queue_slot_reader(slots_.data(), 0, rc.depth)), ioq_(make_queue(rc))
	{
		for (uint16_t t = 0; t < rc.depth; t++)
			bufs_[t] = buf_area_.get() + static_cast<size_t>(t) * rc.io_buf_bytes;
		policy_.publish(kvfdp::placement::default_map(rc.nruh));
		daemon::EngineConfig ec;
		ec.depth = rc.depth;
		ec.io_buf_bytes = rc.io_buf_bytes;
		ec.lba_size = rc.lba_size;
		ec.max_transfer = rc.max_transfer;
		ec.nlb = rc.nlb;
		ec.nruh = rc.nruh;
		ec.fixed_buffers = true;
		ec.zero_copy = rc.zero_copy;
		ec.stripe = layout(rc);
		ec.learned = rc.learned;
		ec.twin = rc.twin;
		engine_ = std::make_unique<daemon::IoEngine>(
			ec, lring_.ring(), *ioq_, descs_.data(),
			rc.zero_copy ? nullptr : bufs_.data(), reader_, policy_, ctr_, *this);
	}

	// UblkQueue::commit: a COMMIT_AND_FETCH_REQ SQE carrying the result.
	void commit(uint16_t tag, int result) override
	{
		io_uring_sqe *sqe = io_uring_get_sqe(&lring_.ring());
		if (!sqe) {
			lost_commits_++;
			return;
		}
		if (rc_.zero_copy)
			ublk::prep_io_cmd(*sqe, -1, ublk::kUIoCommitAndFetchReq, 0, tag, result, 0,
					  daemon::pack_user_data(tag, daemon::UdKind::ublk),
					  ublk::auto_buf_reg_addr(tag));
		else
			ublk::prep_io_cmd(*sqe, -1, ublk::kUIoCommitAndFetchReq, 0, tag, result,
					  reinterpret_cast<uintptr_t>(bufs_[tag]),
					  daemon::pack_user_data(tag, daemon::UdKind::ublk));
	}

	// Runs n more requests through the queue loop, every tag busy while requests remain.
	// Returns false if the loop stalled (a request that never completed).
	bool serve(uint64_t n)
	{
		const uint64_t target = done_ + n;
		target_ = issued_ + n;
		for (uint16_t t = 0; t < rc_.depth && issued_ < target_; t++)
			hand_out(t);
		while (done_ < target) {
			// The queue loop: after io_uring_submit_and_wait_timeout returned.
			io_uring &ring = lring_.ring();
			unsigned head = 0, seen = 0;
			io_uring_cqe *cqe = nullptr;
			io_uring_for_each_cqe(&ring, head, cqe)
			{
				seen++;
				const daemon::UserData ud =
					daemon::unpack_user_data(cqe->user_data);
				if (ud.kind == daemon::UdKind::device) {
					engine_->on_device_cqe(*cqe);
					continue;
				}
				if (ud.tag >= rc_.depth)
					continue;
				if (cqe->res == ublk::kIoResOk)
					engine_->start(ud.tag);
			}
			io_uring_cq_advance(&ring, seen);
			// The kernel: run what was submitted.
			bool progress = seen > 0;
			while (const io_uring_sqe *s = lring_.take_sqe()) {
				progress = true;
				const daemon::UserData ud = daemon::unpack_user_data(s->user_data);
				if (ud.kind == daemon::UdKind::device) {
					device_cmds_++;
					lring_.post_cqe(s->user_data, 0);
					continue;
				}
				// COMMIT_AND_FETCH: check the result, then the next request, if any.
				const auto *c = reinterpret_cast<const ublk::IoCmd *>(s->cmd);
				done_++;
				if (c->result != expect_[ud.tag])
					bad_results_++;
				if (issued_ < target_)
					hand_out(ud.tag);
			}
			if (!progress)
				return false;
		}
		return true;
	}

	[[nodiscard]] const daemon::QueueCounters &counters() const { return ctr_; }
	[[nodiscard]] uint64_t done() const { return done_; }
	[[nodiscard]] uint64_t device_cmds() const { return device_cmds_; }
	// Commits whose result differed from what the request should give.
	[[nodiscard]] uint64_t bad_results() const { return bad_results_; }
	[[nodiscard]] uint64_t lost() const { return lost_commits_ + lring_.cq_overflow(); }
	[[nodiscard]] uint32_t inflight() const { return engine_->device_inflight(); }

private:
	static unsigned ring_entries(const RigConfig &rc)
	{
		// As UblkQueue::create sizes it: every tag's commands plus its commit, as a power of 2.
		daemon::EngineConfig ec;
		ec.io_buf_bytes = rc.io_buf_bytes;
		ec.lba_size = rc.lba_size;
		ec.max_transfer = rc.max_transfer;
		ec.stripe = layout(rc);
		const uint32_t subs = daemon::IoEngine::max_subs_per_request(ec);
		unsigned e = 1;
		while (e < static_cast<uint32_t>(rc.depth) * (subs + 1))
			e <<= 1;
		return e;
	}
	static nvme::DeviceInfo device_info(const RigConfig &rc)
	{
		nvme::DeviceInfo info;
		info.nsid = 1;
		info.lba_size = rc.lba_size;
		info.nlb = rc.nlb / rc.members;  // a member's share
		info.max_transfer = rc.max_transfer;
		return info;
	}
	static nvme::StripeLayout layout(const RigConfig &rc)
	{
		return rc.members > 1
			       ? nvme::StripeLayout{rc.members, rc.stripe_bytes / rc.lba_size}
			       : nvme::StripeLayout{};
	}
	// The passthru backend's queue, or a stripe's queue over one per member.
	static std::unique_ptr<nvme::IoQueue> make_queue(const RigConfig &rc)
	{
		if (rc.members <= 1)
			return nvme::make_passthru_queue(-1, device_info(rc), pids(rc.nruh),
							 rc.depth);
		std::vector<std::unique_ptr<nvme::IoQueue>> qs;
		for (uint32_t m = 0; m < rc.members; m++)
			qs.push_back(nvme::make_passthru_queue(-1, device_info(rc), pids(rc.nruh),
							       rc.depth));
		return nvme::make_stripe_queue(std::move(qs));
	}
	static std::vector<uint16_t> pids(uint16_t nruh)
	{
		std::vector<uint16_t> v(nruh ? nruh : 1);
		for (size_t i = 0; i < v.size(); i++)
			v[i] = static_cast<uint16_t>(i);
		return v;
	}
	// The ublk driver puts request issued_ on tag (its IoDesc), the BPF tagger its slot
	// (seq written last), and the FETCH completes.
	void hand_out(uint16_t tag)
	{
		const RigRequest r = gen_(issued_++);
		ublk::IoDesc &d = descs_[tag];
		d.op_flags = r.op;
		d.nr_sectors = r.sectors;
		d.start_sector = r.sector;
		if (r.op == ublk::kOpWrite && r.cls < KVFDP_NR_CLASSES) {
			kvfdp_tag_slot &s = slots_[tag];
			s.sector = r.sector;
			s.sectors = r.sectors;
			s.cls = r.cls;
			s.writer = r.writer;
			s.source = KVFDP_SRC_BIO_HINT;
			s.op = 1;
			__atomic_store_n(&s.seq, ++seq_, __ATOMIC_RELEASE);
		}
		expect_[tag] = r.op == ublk::kOpRead || r.op == ublk::kOpWrite
				       ? static_cast<int32_t>(r.sectors) << 9
				       : 0;
		lring_.post_cqe(daemon::pack_user_data(tag, daemon::UdKind::ublk), ublk::kIoResOk);
	}

	RigConfig rc_;
	Gen gen_;
	LoopbackRing lring_;
	std::vector<ublk::IoDesc> descs_;
	std::vector<kvfdp_tag_slot> slots_;
	std::unique_ptr<uint8_t[]> buf_area_;
	std::vector<uint8_t *> bufs_;
	std::vector<int32_t> expect_;
	bpf::SlotReader reader_;
	std::unique_ptr<nvme::IoQueue>
		ioq_;  // the passthru backend's own queue (or a stripe of them), on fd -1
	daemon::PolicyTable policy_;
	daemon::QueueCounters ctr_;
	std::unique_ptr<daemon::IoEngine> engine_;
	uint64_t issued_ = 0, target_ = 0, done_ = 0, seq_ = 0;
	uint64_t device_cmds_ = 0, bad_results_ = 0, lost_commits_ = 0;
};

}  // namespace kvfdp::test

namespace kvfdp::test {

// Heap allocations (malloc, calloc, realloc, aligned forms, hence operator new) made by this
// process so far; defined by bench_alloc_hook.cpp, which must be linked into the program.
[[nodiscard]] uint64_t allocation_count();

}  // namespace kvfdp::test
