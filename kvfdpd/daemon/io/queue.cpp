// UblkQueue: ring, buffers and the serve loop of one ublk queue.
#include "kvfdpd/daemon/io/queue.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <liburing.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/log.hpp"
#include "kvfdpd/daemon/io/user_data.hpp"

namespace kvfdp::daemon {

uint32_t fixed_buffer_bytes(uint32_t io_buf_bytes, uint32_t max_request_bytes,
			    uint32_t max_segments, uint32_t page_size)
{
	if (page_size == 0 || io_buf_bytes == 0)
		return 0;
	const uint64_t want =
		std::min(io_buf_bytes, max_request_bytes ? max_request_bytes : io_buf_bytes);
	const uint64_t pages = (want + page_size - 1) / page_size;
	if (max_segments && pages > max_segments)
		return 0;
	return static_cast<uint32_t>(std::min<uint64_t>(pages * page_size, io_buf_bytes));
}

uint16_t auto_queue_count(unsigned cpus, uint16_t depth, uint32_t max_slots, bool single_queue)
{
	if (single_queue || depth == 0)
		return 1;
	uint32_t n = std::max(1u, cpus);
	n = std::min<uint32_t>(n, std::max<uint32_t>(1, max_slots / depth));
	n = std::min<uint32_t>(n, ublk::kMaxQueues);
	return static_cast<uint16_t>(n);
}

unsigned usable_cpus()
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return static_cast<unsigned>(CPU_COUNT(&set));
	return std::max(1u, std::thread::hardware_concurrency());
}

unsigned ring_setup_flags(RingMode mode)
{
	unsigned flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	if (mode >= RingMode::coop_taskrun)
		flags |= IORING_SETUP_COOP_TASKRUN;
	if (mode >= RingMode::defer_taskrun)
		flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			 IORING_SETUP_R_DISABLED;
	return flags;
}

RingMode ring_mode_ceiling()
{
	// Experiment knob (docs/perf.md): KVFDPD_RING=plain|coop|defer caps the ring mode.
	static const RingMode ceiling = [] {
		const char *e = getenv("KVFDPD_RING");
		if (!e)
			return RingMode::defer_taskrun;
		if (!strcmp(e, "plain"))
			return RingMode::plain;
		if (!strcmp(e, "coop"))
			return RingMode::coop_taskrun;
		return RingMode::defer_taskrun;
	}();
	return ceiling;
}

Result<RingMode> init_queue_ring(io_uring &ring, unsigned entries, RingMode ceiling)
{
	int ret = -EINVAL;
	for (const RingMode mode :
	     {RingMode::defer_taskrun, RingMode::coop_taskrun, RingMode::plain}) {
		if (mode > ceiling)
			continue;
		io_uring_params params{};
		params.flags = ring_setup_flags(mode);
		ret = io_uring_queue_init_params(entries, &ring, &params);
		if (ret == 0)
			return mode;
		if (ret != -EINVAL)
			break;  // an older kernel refuses an unknown flag with -EINVAL; anything else is real
	}
	return errno_error(ret, "io_uring_queue_init");
}

int enable_queue_ring(io_uring &ring, RingMode mode)
{
	if (mode != RingMode::defer_taskrun)
		return 0;
	// (liburing 2.3's .so lacks io_uring_enable_rings, which its header declares.)
	if (syscall(__NR_io_uring_register, ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr,
		    0) < 0)
		return -errno;
	return 0;
}

UblkQueue::UblkQueue(const QueueSetup &setup) : setup_(setup), ring_(std::make_unique<io_uring>())
{
}

UblkQueue::~UblkQueue()
{
	stop();
	join();
	engine_.reset();
	ioq_.reset();
	if (ring_ready_)
		io_uring_queue_exit(ring_.get());
	if (buf_area_)
		munmap(buf_area_, buf_area_bytes_);
	if (fetch_ring_)
		munmap(fetch_ring_, batch_area_bytes_);
}

Result<void> UblkQueue::map_tag_buffers(const std::string &what)
{
	const EngineConfig &ec = setup_.engine;
	const uint16_t depth = ec.depth;
	buf_area_bytes_ = static_cast<size_t>(depth) * ec.io_buf_bytes;
	void *area = mmap(nullptr, buf_area_bytes_, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (area == MAP_FAILED)
		return errno_error(errno, what + "allocating tag buffers");
	buf_area_ = static_cast<uint8_t *>(area);
	bufs_.reset(new uint8_t *[depth]);
	for (uint16_t t = 0; t < depth; t++)
		bufs_[t] = buf_area_ + static_cast<size_t>(t) * ec.io_buf_bytes;
	return ok();
}

Result<void> UblkQueue::init_ring(const std::string &what)
{
	const EngineConfig &ec = setup_.engine;
	// The worst case between two submits is every tag's device commands (the engine's own
	// count) plus its commit; the CQ (twice the SQ) holds every command in flight.
	const uint32_t per_request =
		IoEngine::max_subs_per_request(ec) + 1 + (setup_.register_bufs ? 2 : 0);
	const uint32_t entries =
		std::min<uint32_t>(4096, static_cast<uint32_t>(ec.depth) * per_request);
	auto mode = init_queue_ring(*ring_, entries, ring_mode_ceiling());
	if (!mode)
		return errno_error(mode.error().code.value(),
				   what + "io_uring_queue_init (SQE128|CQE32)");
	ring_mode_ = *mode;
	wake_fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!wake_fd_)
		return errno_error(errno, what + "eventfd");
	ring_ready_ = true;
	if (setup_.q_id == 0)
		log::info("queue rings run task work %s",
			  ring_mode_ == RingMode::defer_taskrun  ? "deferred (DEFER_TASKRUN)"
			  : ring_mode_ == RingMode::coop_taskrun ? "cooperatively (COOP_TASKRUN)"
								 : "by signal");
	return ok();
}

Result<void> UblkQueue::register_buffers(const std::string &what)
{
	const EngineConfig &ec = setup_.engine;
	const uint16_t depth = ec.depth;
	int ret = 0;
	if (ec.zero_copy) {
		// The driver fills slot <tag> with each request's pages and empties it at commit.
		ret = io_uring_register_buffers_sparse(ring_.get(), depth);
		if (ret < 0)
			return errno_error(ret,
					   what + "io_uring_register_buffers_sparse (zero copy)");
	} else if (ec.fixed_buffers) {
		std::unique_ptr<iovec[]> iov(new iovec[depth]);
		for (uint16_t t = 0; t < depth; t++)
			iov[t] = iovec{bufs_[t], setup_.fixed_buf_bytes ? setup_.fixed_buf_bytes
									: ec.io_buf_bytes};
		ret = io_uring_register_buffers(ring_.get(), iov.get(), depth);
		if (ret < 0)
			return errno_error(ret, what + "io_uring_register_buffers");
	}
	return ok();
}

Result<std::unique_ptr<UblkQueue>> UblkQueue::create(const QueueSetup &setup)
{
	std::unique_ptr<UblkQueue> q(new UblkQueue(setup));
	const EngineConfig &ec = setup.engine;
	const uint16_t depth = ec.depth;
	const std::string what = "queue " + std::to_string(setup.q_id) + ": ";

	if (!ec.zero_copy)
		KVFDP_TRY(q->map_tag_buffers(what));
	KVFDP_TRY(q->init_ring(what));
	KVFDP_TRY(q->register_buffers(what));

	if (setup.batch) {
		if (auto b = q->create_batch_buffers(); !b)
			return errno_error(b.error().code.value(), what + b.error().message());
		if (setup.q_id == 0)
			log::info(
				"queues take requests in batches (UBLK_F_BATCH_IO: one multishot FETCH_IO_CMDS, one "
				"COMMIT_IO_CMDS per turn)");
	}

	auto ioq = setup.device->open_queue(*q->ring_);
	if (!ioq)
		return std::move(ioq).error();
	q->ioq_ = std::move(*ioq);

	if (setup.char_fd >= 0) {
		auto m = ublk::DescMap::map(setup.char_fd, setup.q_id, depth);
		if (!m)
			return std::move(m).error();
		q->descs_ = std::move(*m);
	}
	q->tags_ = queue_slot_reader(setup.slots, setup.q_id, depth);
	q->engine_ = std::make_unique<IoEngine>(ec, *q->ring_, *q->ioq_, q->descs_.descs(),
						q->bufs_.get(), q->tags_, *setup.policy,
						q->counters_, *q);
	return q;
}

Result<void> UblkQueue::create_batch_buffers()
{
	const uint16_t depth = setup_.engine.depth;
	const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	auto round = [page](size_t n) { return (n + page - 1) / page * page; };
	elem_bytes_ =
		setup_.engine.zero_copy ? sizeof(ublk::BatchElemHeader) : sizeof(ublk::BatchElem);
	batch_flags_ = setup_.engine.zero_copy ? 0 : ublk::kBatchFHasBufAddr;
	commit_buf_bytes_ = static_cast<size_t>(depth) * elem_bytes_;
	// Every fetch completion takes one provided buffer; between two turns of the loop at most
	// depth of them come (each carries a tag the driver handed over), so depth buffers (a power
	// of two, as the ring needs) are never all taken. Each holds every tag, up to 256.
	fetch_bufs_ = 1;
	while (fetch_bufs_ < depth)
		fetch_bufs_ = static_cast<uint16_t>(fetch_bufs_ * 2);
	fetch_buf_bytes_ = static_cast<uint32_t>(std::min<unsigned>(depth, 256) * sizeof(uint16_t));
	const size_t ring_bytes = round(static_cast<size_t>(fetch_bufs_) * sizeof(io_uring_buf));
	const size_t commit_bytes = round(kCommitBufs * commit_buf_bytes_);
	batch_area_bytes_ = ring_bytes + commit_bytes +
			    round(static_cast<size_t>(fetch_bufs_) * fetch_buf_bytes_);
	void *area = mmap(nullptr, batch_area_bytes_, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (area == MAP_FAILED)
		return errno_error(errno, "allocating the batch command buffers");
	fetch_ring_ = static_cast<io_uring_buf_ring *>(area);
	commit_area_ = static_cast<uint8_t *>(area) + ring_bytes;
	fetch_area_ = commit_area_ + commit_bytes;
	io_uring_buf_reg reg{};
	reg.ring_addr = reinterpret_cast<uintptr_t>(fetch_ring_);
	reg.ring_entries = fetch_bufs_;
	reg.bgid = 0;
	if (const int ret = io_uring_register_buf_ring(ring_.get(), &reg, 0); ret < 0)
		return errno_error(ret, "io_uring_register_buf_ring (the fetch's tag buffers)");
	io_uring_buf_ring_init(fetch_ring_);
	const int mask = io_uring_buf_ring_mask(fetch_bufs_);
	for (uint16_t b = 0; b < fetch_bufs_; b++)
		io_uring_buf_ring_add(fetch_ring_,
				      fetch_area_ + static_cast<size_t>(b) * fetch_buf_bytes_,
				      fetch_buf_bytes_, b, mask, b);
	io_uring_buf_ring_advance(fetch_ring_, fetch_bufs_);
	return ok();
}

int UblkQueue::prep_batch()
{
	const uint16_t depth = setup_.engine.depth;
	void *elems = commit_buf(0);
	for (uint16_t t = 0; t < depth; t++)
		ublk::put_batch_elem(elems, elem_bytes_, t, t, t, 0,
				     bufs_ ? reinterpret_cast<uintptr_t>(bufs_[t]) : 0);
	io_uring_sqe *sqe = next_sqe();
	if (!sqe)
		return -EBUSY;
	ublk::prep_batch_cmd(*sqe, setup_.char_fd, ublk::kUIoPrepIoCmds, setup_.q_id, batch_flags_,
			     depth, elem_bytes_, elems, pack_user_data(0, UdKind::batch_prep));
	const int res = ublk::submit_and_reap_one(*ring_);
	return res < 0 ? res : 0;
}

void UblkQueue::arm_fetch()
{
	if (io_uring_sqe *sqe = next_sqe())
		ublk::prep_batch_fetch(*sqe, setup_.char_fd, setup_.q_id, 0,
				       static_cast<uint16_t>(fetch_buf_bytes_ / sizeof(uint16_t)),
				       pack_user_data(0, UdKind::batch_fetch));
}

void UblkQueue::flush_commits()
{
	if (commit_fill_ == 0)
		return;
	unsigned next = kCommitBufs;
	for (unsigned i = 1; i < kCommitBufs && next == kCommitBufs; i++)
		if (!commit_busy_[(commit_cur_ + i) % kCommitBufs])
			next = (commit_cur_ + i) % kCommitBufs;
	if (next == kCommitBufs)
		return;  // every other buffer is still in flight: these go with the next turn
	io_uring_sqe *sqe = next_sqe();
	if (!sqe)
		return;
	ublk::prep_batch_cmd(
		*sqe, setup_.char_fd, ublk::kUIoCommitIoCmds, setup_.q_id, batch_flags_,
		commit_fill_, elem_bytes_, commit_buf(commit_cur_),
		pack_user_data(static_cast<uint16_t>(commit_cur_), UdKind::batch_commit));
	commit_busy_[commit_cur_] = true;
	commit_sent_[commit_cur_] = commit_fill_;
	commit_cur_ = next;
	commit_fill_ = 0;
}

void UblkQueue::on_commit_cqe(uint16_t buf, int res)
{
	if (buf >= kCommitBufs)
		return;
	commit_busy_[buf] = false;
	// res: bytes of elements taken; those after them were not committed (their requests end
	// with the device, which is the only time the driver refuses a commit of a tag it handed over).
	const int64_t taken = res < 0 ? 0 : res / elem_bytes_;
	if (taken < commit_sent_[buf])
		commit_failures_ += static_cast<uint64_t>(commit_sent_[buf] - taken);
}

void UblkQueue::on_fetch_cqe(const io_uring_cqe &cqe)
{
	const uint16_t depth = setup_.engine.depth;
	if (cqe.flags & IORING_CQE_F_BUFFER) {
		const uint16_t bid = static_cast<uint16_t>(cqe.flags >> IORING_CQE_BUFFER_SHIFT);
		uint8_t *buf = fetch_area_ + static_cast<size_t>(bid) * fetch_buf_bytes_;
		const unsigned n = cqe.res > 0 ? std::min<unsigned>(static_cast<unsigned>(cqe.res),
								    fetch_buf_bytes_) /
							 2
					       : 0;
		for (unsigned i = 0; i < n; i++) {
			uint16_t tag;
			std::memcpy(&tag, buf + 2 * i, sizeof(tag));
			if (tag >= depth)
				continue;
			if (setup_.register_bufs)
				prep_buf_cmd(ublk::kUIoRegisterIoBuf, tag);
			engine_->start(tag);
		}
		// Its tags are read: the buffer goes back for the next completion.
		io_uring_buf_ring_add(fetch_ring_, buf, fetch_buf_bytes_, bid,
				      io_uring_buf_ring_mask(fetch_bufs_), 0);
		io_uring_buf_ring_advance(fetch_ring_, 1);
	}
	if (cqe.flags & IORING_CQE_F_MORE)
		return;
	// The fetch ended: with the device (-ENODEV) or the queue's stop for good, else (no
	// provided buffer left, or any other early end) it is armed again.
	if (cqe.res == -ENODEV || stop_.load(std::memory_order_acquire)) {
		fetch_ended_ = true;
		return;
	}
	fetch_rearms_++;
	arm_fetch();
}

void UblkQueue::stop()
{
	stop_.store(true, std::memory_order_release);
	if (!wake_fd_)
		return;
	// A full counter (EAGAIN) is a wake already pending.
	const uint64_t one = 1;
	[[maybe_unused]] const ssize_t n = write(wake_fd_.get(), &one, sizeof one);
}

void UblkQueue::arm_wake()
{
	if (io_uring_sqe *sqe = next_sqe()) {
		io_uring_prep_poll_add(sqe, wake_fd_.get(), POLLIN);
		io_uring_sqe_set_data64(sqe, pack_user_data(0, UdKind::wake));
	}
}

void UblkQueue::start()
{
	thread_ = std::thread([this] { run(); });
}

void UblkQueue::join()
{
	if (thread_.joinable())
		thread_.join();
}

io_uring_sqe *UblkQueue::next_sqe()
{
	io_uring_sqe *sqe = io_uring_get_sqe(ring_.get());
	if (!sqe) {
		io_uring_submit(ring_.get());
		sqe = io_uring_get_sqe(ring_.get());
	}
	return sqe;
}

void UblkQueue::prep_buf_cmd(uint32_t cmd_op, uint16_t tag)
{
	if (!carries_data(request_op(descs_.descs()[tag])))
		return;
	// Failures show in the request: its device commands find no buffer (-EFAULT).
	if (io_uring_sqe *sqe = next_sqe())
		ublk::prep_io_cmd(*sqe, setup_.char_fd, cmd_op, setup_.q_id, tag, 0, tag,
				  pack_user_data(tag, UdKind::buf));
}

void UblkQueue::commit(uint16_t tag, int result)
{
	// Unregistering first: the driver completes the request once both are in, in any order.
	if (setup_.register_bufs)
		prep_buf_cmd(ublk::kUIoUnregisterIoBuf, tag);
	if (setup_.batch) {
		if (commit_fill_ >= setup_.engine.depth)
			return;  // cannot happen: a tag is gathered at most once between two flushes
		// Gathered for this turn's COMMIT_IO_CMDS (flush_commits); the slot stays <tag>.
		ublk::put_batch_elem(commit_buf(commit_cur_), elem_bytes_, commit_fill_++, tag, tag,
				     result, bufs_ ? reinterpret_cast<uintptr_t>(bufs_[tag]) : 0);
		return;
	}
	io_uring_sqe *sqe = next_sqe();
	if (!sqe)
		return;  // cannot happen with the ring sized for depth * (subs + 1 + buffer commands)
	prep_fetch(*sqe, ublk::kUIoCommitAndFetchReq, tag, result);
}

void UblkQueue::prep_fetch(io_uring_sqe &sqe, uint32_t cmd_op, uint16_t tag, int result)
{
	if (setup_.engine.zero_copy)
		ublk::prep_io_cmd(sqe, setup_.char_fd, cmd_op, setup_.q_id, tag, result, 0,
				  pack_user_data(tag, UdKind::ublk),
				  setup_.register_bufs ? 0 : ublk::auto_buf_reg_addr(tag));
	else
		ublk::prep_io_cmd(sqe, setup_.char_fd, cmd_op, setup_.q_id, tag, result,
				  reinterpret_cast<uintptr_t>(bufs_[tag]),
				  pack_user_data(tag, UdKind::ublk));
}

void UblkQueue::run()
{
	// Created disabled in create()'s thread: enabling it here makes this thread its single issuer.
	if (const int en = enable_queue_ring(*ring_, ring_mode_); en < 0) {
		exit_status_.store(en);
		log::error("queue %u: enabling the ring: %s", setup_.q_id, strerror(-en));
		fetched_.store(true, std::memory_order_release);
		return;
	}
	if (const int ret = fetch_all(); ret < 0) {
		exit_status_.store(ret);
		log::error("queue %u: submitting %s: %s", setup_.q_id,
			   setup_.batch ? "PREP_IO_CMDS" : "FETCH_REQ", strerror(-ret));
		fetched_.store(true, std::memory_order_release);
		return;
	}
	fetched_.store(true, std::memory_order_release);
	arm_wake();  // submitted with the loop's first wait; a stop() before it is seen at once
	serve();
	if (setup_.batch)
		flush_commits();
	io_uring_submit(ring_.get());  // the last commits
	if (setup_.batch && (commit_failures_ || fetch_rearms_))
		log::info(
			"queue %u: %llu commit(s) refused as the device went, fetch re-armed %llu time(s)",
			setup_.q_id, static_cast<unsigned long long>(commit_failures_),
			static_cast<unsigned long long>(fetch_rearms_));
}

int UblkQueue::fetch_all()
{
	io_uring *ring = ring_.get();
	if (setup_.batch) {
		// Every tag at once, then one fetch that stays armed (UBLK_F_BATCH_IO).
		const int ret = prep_batch();
		if (ret != 0)
			return ret;
		arm_fetch();
		return io_uring_submit(ring);
	}
	for (uint16_t t = 0; t < setup_.engine.depth; t++) {
		io_uring_sqe *sqe = io_uring_get_sqe(ring);
		if (!sqe) {
			io_uring_submit(ring);
			sqe = io_uring_get_sqe(ring);
		}
		prep_fetch(*sqe, ublk::kUIoFetchReq, t, -1);
	}
	return io_uring_submit(ring);
}

void UblkQueue::serve()
{
	io_uring *ring = ring_.get();
	const uint16_t depth = setup_.engine.depth;
	for (;;) {
		if (stop_.load(std::memory_order_acquire) && engine_->device_inflight() == 0)
			break;
		if ((aborted_ == depth || fetch_ended_) && engine_->device_inflight() == 0)
			break;  // the driver gave every tag back (or ended the fetch): the device is gone
		if (setup_.batch)
			flush_commits();
		// No timeout: stop() wakes the wait through wake_fd_'s poll.
		const int ret = io_uring_submit_and_wait(ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -EBUSY) {
			exit_status_.store(ret);
			log::error("queue %u: io_uring wait: %s", setup_.q_id, strerror(-ret));
			break;
		}
		unsigned head = 0, seen = 0;
		io_uring_cqe *cqe = nullptr;
		io_uring_for_each_cqe(ring, head, cqe)
		{
			seen++;
			on_cqe(*cqe);
		}
		io_uring_cq_advance(ring, seen);
	}
}

inline void UblkQueue::on_cqe(const io_uring_cqe &cqe)
{
	const UserData ud = unpack_user_data(cqe.user_data);
	switch (ud.kind) {
	case UdKind::device: engine_->on_device_cqe(cqe); return;
	case UdKind::batch_fetch: on_fetch_cqe(cqe); return;
	case UdKind::batch_commit: on_commit_cqe(ud.tag, cqe.res); return;
	case UdKind::wake: return;  // stop(): the loop sees stop_
	case UdKind::ublk: break;
	default: return;
	}
	if (ud.tag >= setup_.engine.depth)
		return;
	if (cqe.res == ublk::kIoResOk) {
		if (setup_.register_bufs)
			prep_buf_cmd(ublk::kUIoRegisterIoBuf, ud.tag);
		engine_->start(ud.tag);
	} else {
		// -ENODEV: the device is stopping; the tag is not re-armed.
		aborted_++;
	}
}

}  // namespace kvfdp::daemon
