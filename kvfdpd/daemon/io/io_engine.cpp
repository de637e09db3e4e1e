// IoEngine: ublk request -> device commands -> commit.
#include "kvfdpd/daemon/io/io_engine.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <liburing.h>

#include "nvme/spec.hpp"
#include "nvme/status.hpp"
#include "kvfdpd/daemon/learned.hpp"
#include "kvfdpd/daemon/io/user_data.hpp"

namespace kvfdp::daemon {

namespace {
// NVMe Write Zeroes NLB is a 16-bit 0-based field; DSM ranges carry a 32-bit NLB.
constexpr uint32_t kMaxWriteZeroesNlb = nvme::kMaxNlb;

uint32_t max_nlb_of(const EngineConfig &cfg)
{
	return std::max<uint32_t>(1, cfg.max_transfer / cfg.lba_size);
}
}  // namespace

uint32_t IoEngine::max_subs_per_request(const EngineConfig &cfg)
{
	// The largest read/write (io_buf_bytes) split at the transfer limit, plus one piece per
	// stripe unit end it may cross; write zeroes (at most kMaxWriteZeroesNlb LBAs per
	// request, ublk::make_params), flush and discard take one command per member.
	const uint32_t max_nlb = max_nlb_of(cfg);
	const uint64_t io_nlb = cfg.io_buf_bytes / cfg.lba_size;
	uint64_t data = (io_nlb + max_nlb - 1) / max_nlb;
	if (cfg.stripe.members > 1 && cfg.stripe.unit_nlb)
		data += (io_nlb + cfg.stripe.unit_nlb - 1) / cfg.stripe.unit_nlb + 1;
	return static_cast<uint32_t>(std::max<uint64_t>({1, data, cfg.stripe.members}));
}

IoEngine::IoEngine(const EngineConfig &cfg, io_uring &ring, nvme::IoQueue &ioq,
		   const ublk::IoDesc *descs, uint8_t *const *bufs, bpf::SlotReader &tags,
		   const PolicyTable &policy, QueueCounters &ctr, Committer &committer)
    : cfg_(cfg), ring_(ring), ioq_(ioq), descs_(descs), bufs_(bufs), tags_(tags), policy_(policy),
      ctr_(ctr), committer_(committer), state_(new TagState[cfg.depth]())
{
	lba_shift_ = static_cast<uint32_t>(std::countr_zero(cfg_.lba_size)) - 9;
	max_nlb_ = max_nlb_of(cfg_);
}

// The write path, top down: start() decodes the request, classify_and_place() picks its
// command (a write: its class from the tag slot, then its handle), record_twin() tells the
// twin, split() cuts it into device commands and submit_sub() preps each on the ring.
void IoEngine::start(uint16_t tag)
{
	const ublk::IoDesc &d = descs_[tag];
	const Request r = decode(d);
	TagState &st = state_[tag];
	st.pending = 1;  // guards against finishing while subs are still being prepped
	st.error = 0;
	st.done_bytes = 0;
	if (r.ranged &&
	    (r.nlb == 0 || r.slba + r.nlb > cfg_.nlb || (d.nr_sectors & ((1u << lba_shift_) - 1)) ||
	     (r.data && r.bytes > cfg_.io_buf_bytes))) {
		st.error = -EIO;
		ctr_.errors.add(1);
		sub_done(tag, 0);
		return;
	}
	nvme::IoRequest req;
	uint32_t per_cmd = r.nlb;  // the most LBAs one command takes (flush: one command of none)
	if (!classify_and_place(tag, d, r, req, per_cmd)) {
		ctr_.unsupported.add(1);
		st.error = -EOPNOTSUPP;
		sub_done(tag, 0);  // drop the guard
		return;
	}
	if (cfg_.twin)
		record_twin(r, req);
	uintptr_t base =
		0;  // data ops: where the request's data starts (0: in the registered request)
	if (r.data) {
		st.done_bytes = static_cast<uint32_t>(r.bytes);
		per_cmd = max_nlb_;
		base = attach_data(tag, r, req);
	}
	split(tag, r, req, per_cmd, base);
	sub_done(tag, 0);  // drop the guard
}

inline IoEngine::Request IoEngine::decode(const ublk::IoDesc &d) const
{
	Request r;
	r.op = request_op(d);
	r.data = carries_data(r.op);
	r.ranged = r.data || r.op == ublk::kOpDiscard || r.op == ublk::kOpWriteZeroes;
	r.slba = d.start_sector >> lba_shift_;
	r.nlb = d.nr_sectors >> lba_shift_;
	r.bytes = static_cast<uint64_t>(d.nr_sectors) << 9;
	return r;
}

inline bool IoEngine::classify_and_place(uint16_t tag, const ublk::IoDesc &d, const Request &r,
					 nvme::IoRequest &req, uint32_t &per_cmd)
{
	switch (r.op) {
	case ublk::kOpWrite:
		req.op = nvme::IoOp::write;
		req.handle = place_write(tag, d, r);
		return true;
	case ublk::kOpRead:
		ctr_.reads.add(1);
		ctr_.read_bytes.add(r.bytes);
		req.op = nvme::IoOp::read;
		return true;
	case ublk::kOpFlush:
		ctr_.flushes.add(1);
		req.op = nvme::IoOp::flush;
		return true;
	case ublk::kOpDiscard:
		ctr_.discards.add(1);
		ctr_.discard_bytes.add(r.bytes);
		req.op = nvme::IoOp::deallocate;  // one DSM range
		if (cfg_.learned)
			cfg_.learned->discard(r.slba, r.nlb);
		return true;
	case ublk::kOpWriteZeroes:
		ctr_.write_zeroes.add(1);
		ctr_.write_zeroes_bytes.add(r.bytes);
		req.op = nvme::IoOp::write_zeroes;
		if (cfg_.learned)
			cfg_.learned->discard(r.slba, r.nlb);
		per_cmd = kMaxWriteZeroesNlb;
		return true;
	default: return false;
	}
}

// The live WAF twin's ring (model/twin/): each write with its handle, each discard and
// write zeroes.
inline void IoEngine::record_twin(const Request &r, const nvme::IoRequest &req)
{
	if (r.op == ublk::kOpWrite)
		twin::record_write(cfg_.twin, r.slba, r.nlb, req.handle);
	else if (r.op == ublk::kOpDiscard)
		twin::record_trim(cfg_.twin, twin::Op::discard, r.slba, r.nlb);
	else if (r.op == ublk::kOpWriteZeroes)
		twin::record_trim(cfg_.twin, twin::Op::write_zeroes, r.slba, r.nlb);
}

inline uint16_t IoEngine::place_write(uint16_t tag, const ublk::IoDesc &d, const Request &r)
{
	const WriteClass t = classify_write(tags_, tag, d.start_sector, d.nr_sectors);
	if (t.stale)
		ctr_.stale_tags.add(1);
	uint16_t handle = !cfg_.nruh     ? 0
			  : cfg_.learned ? cfg_.learned->place(t.writer, t.cls, r.slba, r.nlb)
					 : policy_.handle_of(t.cls);
	if (cfg_.nruh && handle >= cfg_.nruh)
		handle = 0;
	ctr_.writes.add(1);
	ctr_.write_bytes.add(r.bytes);
	ctr_.class_writes[t.cls].add(1);
	ctr_.class_bytes[t.cls].add(r.bytes);
	if (handle < placement::kMaxHandles) {
		ctr_.handle_writes[handle].add(1);
		ctr_.handle_bytes[handle].add(r.bytes);
	}
	return handle;
}

inline uintptr_t IoEngine::attach_data(uint16_t tag, const Request &r, nvme::IoRequest &req)
{
	if (cfg_.zero_copy) {
		req.buf_index = tag;  // the driver registered the request's pages there
		return 0;
	}
	req.buf_index = cfg_.fixed_buffers ? tag : -1;
	ctr_.copied_bytes.add(
		r.bytes);  // the driver copied it into / will copy it out of bufs[tag]
	return reinterpret_cast<uintptr_t>(bufs_[tag]);
}

// The one split. Reads and writes (and anything on one member): each piece ends at the
// per-command limit or its stripe unit's end and goes to its member at its member LBA. On a
// stripe, flush goes to every member, and discard and write zeroes take on each member the
// one contiguous member range the request covers there.
inline void IoEngine::split(uint16_t tag, const Request &r, nvme::IoRequest &req, uint32_t per_cmd,
			    uintptr_t base)
{
	if (r.data || cfg_.stripe.members <= 1)
		split_pieces(tag, r, req, per_cmd, base);
	else
		split_members(tag, r, req, per_cmd);
}

inline void IoEngine::split_pieces(uint16_t tag, const Request &r, nvme::IoRequest &req,
				   uint32_t per_cmd, uintptr_t base)
{
	const nvme::StripeLayout &layout = cfg_.stripe;
	uint16_t sub = 0;
	uint32_t off_lbas = 0;
	do {
		const nvme::StripeLayout::Piece p = layout.map(r.slba + off_lbas);
		const uint32_t n = static_cast<uint32_t>(
			std::min<uint64_t>(std::min(per_cmd, r.nlb - off_lbas), p.nlb));
		req.member = static_cast<uint8_t>(p.member);
		req.slba = p.mlba;
		req.nlb = n;
		// A stripe's writes count their bytes per member and handle (one namespace: handle_bytes).
		if (p.nlb != UINT64_MAX && req.op == nvme::IoOp::write &&
		    req.handle < placement::kMaxHandles)
			ctr_.member_handle_bytes[p.member][req.handle].add(uint64_t{n} *
									   cfg_.lba_size);
		req.buf = reinterpret_cast<void *>(base + static_cast<uintptr_t>(off_lbas) *
								  cfg_.lba_size);
		req.user_data = pack_user_data(tag, UdKind::device, sub++);
		submit_sub(tag, req);
		off_lbas += n;
	} while (off_lbas < r.nlb);
}

void IoEngine::split_members(uint16_t tag, const Request &r, nvme::IoRequest &req, uint32_t per_cmd)
{
	const nvme::StripeLayout &layout = cfg_.stripe;
	uint16_t sub = 0;
	for (uint32_t m = 0; m < layout.members; m++) {
		nvme::StripeLayout::Range mr{0, 0};  // flush: one command of no LBAs
		if (r.ranged) {
			mr = layout.member_range(m, r.slba, r.nlb);
			if (!mr.nlb)
				continue;
		}
		req.member = static_cast<uint8_t>(m);
		do {
			const uint32_t n =
				static_cast<uint32_t>(std::min<uint64_t>(per_cmd, mr.nlb));
			req.slba = mr.mlba;
			req.nlb = n;
			req.user_data = pack_user_data(tag, UdKind::device, sub++);
			submit_sub(tag, req);
			mr.mlba += n;
			mr.nlb -= n;
		} while (mr.nlb);
	}
}

void IoEngine::submit_sub(uint16_t tag, const nvme::IoRequest &req)
{
	TagState &st = state_[tag];
	nvme::Prep p = ioq_.prep(ring_, req);
	if (!p.queued && (p.result == -EBUSY || p.result == -EAGAIN)) {
		// The SQ is full: push what is queued to the kernel (a syscall), then try once more.
		io_uring_submit(&ring_);
		p = ioq_.prep(ring_, req);
	}
	if (p.queued) {
		st.pending++;
		inflight_++;
		return;
	}
	const int e = nvme::result_to_errno(p.result);
	if (e && !st.error) {
		st.error = e;
		ctr_.errors.add(1);
	}
}

void IoEngine::on_device_cqe(const io_uring_cqe &cqe)
{
	const UserData ud = unpack_user_data(cqe.user_data);
	if (ud.tag >= cfg_.depth)
		return;
	inflight_--;
	sub_done(ud.tag, ioq_.complete(cqe));
}

void IoEngine::sub_done(uint16_t tag, int result)
{
	TagState &st = state_[tag];
	if (result) {
		const int e = nvme::result_to_errno(result);
		if (!st.error) {
			st.error = e;
			ctr_.errors.add(1);
		}
	}
	st.pending--;
	finish_if_done(tag);
}

void IoEngine::finish_if_done(uint16_t tag)
{
	TagState &st = state_[tag];
	if (st.pending)
		return;
	committer_.commit(tag, st.error ? st.error : static_cast<int>(st.done_bytes));
}

}  // namespace kvfdp::daemon
