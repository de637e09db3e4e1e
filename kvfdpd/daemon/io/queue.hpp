// UblkQueue: one ublk queue served by one thread with one io_uring (SQE128 | CQE32) that
// carries the queue's FETCH / COMMIT_AND_FETCH commands and its device commands. In copy mode
// each tag has a buffer of its own (registered as fixed buffer <tag>); in zero-copy mode the
// ring has a sparse buffer table of depth slots in which the driver registers each request's
// pages at slot <tag> (UBLK_F_AUTO_BUF_REG, the slot named in every FETCH/COMMIT's sqe->addr).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "nvme/device.hpp"
#include "kvfdpd/daemon/io/queue_counters.hpp"
#include "kvfdpd/daemon/io/io_engine.hpp"
#include "kvfdpd/daemon/policy_table.hpp"
#include "kvfdpd/ublk/io_cmd.hpp"

struct io_uring;
struct io_uring_buf_ring;
struct io_uring_cqe;

namespace kvfdp::daemon {

struct QueueSetup {
	uint16_t q_id = 0;
	int char_fd = -1;  // /dev/ublkcN, shared by the queues
	nvme::Device *device = nullptr;
	const volatile kvfdp_tag_slot *slots = nullptr;  // tagger slot array, or nullptr
	const PolicyTable *policy = nullptr;
	// engine.zero_copy: the device was created with ublk::kFlagAutoBufReg or
	// ublk::kFlagSupportZeroCopy (then register_bufs)
	EngineConfig engine;
	// Zero copy by per-request registration (ublk::DataMode::zero_copy_reg): the queue issues
	// REGISTER_IO_BUF of a read/write request at slot <tag> before the engine's device
	// commands and UNREGISTER_IO_BUF before its commit.
	bool register_bufs = false;
	// The device has ublk::kFlagBatchIo: the queue PREPs every tag once, takes requests from one
	// multishot FETCH_IO_CMDS and commits them in batches (COMMIT_IO_CMDS), one per loop turn.
	bool batch = false;
	// With engine.fixed_buffers: bytes of each tag's buffer registered as its fixed buffer
	// (see fixed_buffer_bytes); 0 registers the whole io_buf_bytes.
	uint32_t fixed_buf_bytes = 0;
};

// How much of each tag's buffer to register, or 0: use unregistered buffers. Commands of a
// request address its tag's buffer from the start up to max_request_bytes (the device's
// max_sectors, at most io_buf_bytes). Linux 6.1 fails a fixed-buffer passthrough command
// with -EINVAL when the registration holds more than max_segments pages from the command's
// start (docs/nvme.md "The transfer limit"), so just the largest request is registered, and
// nothing when even that is more than max_segments pages. max_segments 0: no such limit.
[[nodiscard]] uint32_t fixed_buffer_bytes(uint32_t io_buf_bytes, uint32_t max_request_bytes,
					  uint32_t max_segments, uint32_t page_size);

// --queues auto: one queue (and thread) per CPU kvfdpd may run on, at most as many as the
// tagger's slot array holds at this depth (queues x depth <= max_slots) and ublk allows;
// single_queue (the model backend: its FTL takes one I/O queue) gives 1.
[[nodiscard]] uint16_t auto_queue_count(unsigned cpus, uint16_t depth, uint32_t max_slots,
					bool single_queue);
// CPUs this process may run on (its affinity mask; at least 1).
[[nodiscard]] unsigned usable_cpus();

// How the queue's ring runs task work (the driver's request dispatch and the device's completions):
// plain: the kernel interrupts the thread for it (TWA_SIGNAL); coop_taskrun: it runs at the thread's
// next kernel entry, without an IPI to a running thread (5.19+); defer_taskrun: only while the thread
// waits in io_uring_enter, batched (6.1+; with SINGLE_ISSUER, the queue thread the only submitter).
// create() takes the highest the kernel accepts.
enum class RingMode : uint8_t { plain, coop_taskrun, defer_taskrun };
[[nodiscard]] unsigned ring_setup_flags(RingMode mode);
// The highest mode create() tries (defer_taskrun unless capped for measurements).
[[nodiscard]] RingMode ring_mode_ceiling();
// io_uring_queue_init of a queue ring (SQE128 | CQE32) in the highest mode up to ceiling that
// the kernel takes; a defer_taskrun ring is created disabled (IORING_SETUP_R_DISABLED).
[[nodiscard]] Result<RingMode> init_queue_ring(io_uring &ring, unsigned entries, RingMode ceiling);
// In the thread that will submit to it: enables a defer_taskrun ring, making that thread its
// single issuer (no-op for the other modes). 0 or -errno.
[[nodiscard]] int enable_queue_ring(io_uring &ring, RingMode mode);

class UblkQueue final : public Committer {
public:
	// Sets up the ring, per-tag buffers (registered), the device queue and the descriptor
	// map, in the calling thread. start() runs the loop in a new thread.
	[[nodiscard]] static Result<std::unique_ptr<UblkQueue>> create(const QueueSetup &setup);
	~UblkQueue() override;

	// Starts the thread: it FETCHes every tag, then serves requests until stop().
	void start();
	// Asks the thread to finish: it completes what it holds (no device command left in
	// flight), submits the last commits and exits. join() waits for it. The wake eventfd's
	// poll ends the thread's wait, which therefore needs no timeout (a timed wait arms and
	// cancels an hrtimer on every sleep: docs/perf.md section 4).
	void stop();
	void join();
	// 0, or the -errno that ended the loop early.
	[[nodiscard]] int exit_status() const { return exit_status_.load(); }
	[[nodiscard]] const QueueCounters &counters() const { return counters_; }
	// Every tag has been FETCHed once (the driver may now start the device).
	[[nodiscard]] bool fetched() const { return fetched_.load(std::memory_order_acquire); }

	void commit(uint16_t tag, int result) override;

private:
	explicit UblkQueue(const QueueSetup &setup);
	// create()'s steps; what ("queue N: ") starts their error messages.
	// Copy mode: one io_buf_bytes buffer per tag, page aligned, in one mapping.
	[[nodiscard]] Result<void> map_tag_buffers(const std::string &what);
	// The ring in the highest mode the kernel takes (sized for every tag's commands), and the
	// wake eventfd.
	[[nodiscard]] Result<void> init_ring(const std::string &what);
	// Registers the ring's buffer table: sparse slots (zero copy) or the tag buffers
	// (fixed_buffers); neither, nothing.
	[[nodiscard]] Result<void> register_buffers(const std::string &what);
	// The thread: enables the ring, fetches every tag, serves until stop(), sends the last commits.
	void run();
	// FETCH_REQ of every tag (batch mode: PREP_IO_CMDS of all and the multishot fetch), submitted.
	// >= 0, or -errno.
	[[nodiscard]] int fetch_all();
	// Waits for CQEs and dispatches them until stop() with nothing in flight, or the device goes.
	void serve();
	// One CQE, by its user_data kind: a device command's, a fetch's, a commit's.
	void on_cqe(const io_uring_cqe &cqe);
	// Fills sqe with FETCH_REQ or COMMIT_AND_FETCH_REQ (cmd_op) of tag.
	void prep_fetch(io_uring_sqe &sqe, uint32_t cmd_op, uint16_t tag, int result);
	// With register_bufs and a read/write request on tag: queues REGISTER_IO_BUF or
	// UNREGISTER_IO_BUF (cmd_op) of its pages at slot <tag>.
	void prep_buf_cmd(uint32_t cmd_op, uint16_t tag);
	// An SQE, submitting what is queued first when the SQ is full; nullptr if still none.
	io_uring_sqe *next_sqe();
	// Batch mode (setup.batch): the commit buffers and the provided buffers the fetch fills.
	[[nodiscard]] Result<void> create_batch_buffers();
	// PREP_IO_CMDS of every tag, waited for (the device cannot start before): 0 or -errno.
	[[nodiscard]] int prep_batch();
	void arm_fetch();
	// Queues the one-shot poll on wake_fd_ (UdKind::wake).
	void arm_wake();
	// Queues one COMMIT_IO_CMDS of the commits gathered since the last, when a commit buffer
	// is free to gather the next ones in (else they wait for the next turn).
	void flush_commits();
	void on_fetch_cqe(const io_uring_cqe &cqe);
	void on_commit_cqe(uint16_t buf, int res);
	[[nodiscard]] void *commit_buf(unsigned i) const
	{
		return commit_area_ + static_cast<size_t>(i) * commit_buf_bytes_;
	}

	QueueSetup setup_;
	std::unique_ptr<io_uring> ring_;
	bool ring_ready_ = false;
	RingMode ring_mode_ = RingMode::plain;
	ublk::DescMap descs_;
	std::unique_ptr<uint8_t *[]> bufs_;  // copy mode: each tag's buffer; zero copy: none
	uint8_t *buf_area_ = nullptr;
	size_t buf_area_bytes_ = 0;
	std::unique_ptr<nvme::IoQueue> ioq_;
	bpf::SlotReader tags_;  // the queue's one reader of its tag slots
	std::unique_ptr<IoEngine> engine_;
	QueueCounters counters_;
	std::thread thread_;
	std::atomic<bool> stop_{false};
	UniqueFd wake_fd_;  // eventfd: stop() writes it, a poll on the ring sees it
	std::atomic<bool> fetched_{false};
	std::atomic<int> exit_status_{0};
	uint32_t aborted_ = 0;
	// Batch mode. Each tag is gathered at most once between two flushes (it is the driver's
	// again only after its commit), so a commit buffer of depth elements always has room.
	static constexpr unsigned kCommitBufs = 4;
	uint8_t elem_bytes_ = 0;    // sizeof(ublk::BatchElem) in copy mode, else the header's
	uint16_t batch_flags_ = 0;  // ublk::kBatchFHasBufAddr in copy mode
	uint8_t *commit_area_ = nullptr;
	size_t commit_buf_bytes_ = 0;
	size_t batch_area_bytes_ = 0;
	unsigned commit_cur_ = 0;                 // the buffer commits are gathered in
	uint16_t commit_fill_ = 0;                // elements gathered in it
	bool commit_busy_[kCommitBufs] = {};      // a COMMIT_IO_CMDS of it is in flight
	uint16_t commit_sent_[kCommitBufs] = {};  // its element count
	io_uring_buf_ring *fetch_ring_ =
		nullptr;  // provided buffers of group 0, fetch_bufs_ of them
	uint16_t fetch_bufs_ = 0;
	uint32_t fetch_buf_bytes_ = 0;
	uint8_t *fetch_area_ = nullptr;
	bool fetch_ended_ = false;      // the fetch ended with the device (-ENODEV) or a stop
	uint64_t commit_failures_ = 0;  // elements a COMMIT_IO_CMDS did not take
	uint64_t fetch_rearms_ = 0;     // fetches re-armed after ending early (e.g. -ENOBUFS)
};

}  // namespace kvfdp::daemon
