// Pipeline: the worker thread, its io_uring and the staging ring. It moves each queued job's
// pieces through the ring (copy engine <-> staging slot <-> io_uring) and publishes an
// evict's chunk by rename (or through the store index).
#pragma once

#include <liburing.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "common/unique_fd.hpp"
#include "kvgpu/copy_engine.hpp"
#include "kvgpu/counters.hpp"
#include "kvgpu/job_table.hpp"
#include "kvgpu/kvgpu.h"
#include "kvgpu/prefetch_cache.hpp"
#include "kvgpu/store_index.hpp"

namespace kvfdp::gpu {

// staged: a prefetch slot holding a whole verified chunk until a load claims it.
enum class SlotState : uint8_t { free, copying, copied, io, io_done, staged };

struct Slot {
	SlotState state = SlotState::free;
	unsigned job = 0;
	uint64_t piece = 0;
	uint32_t len = 0;
	char *buf = nullptr;
};

class Pipeline {
public:
	// The options, tables and counters are the context's, and outlive the pipeline.
	Pipeline(const kvgpu_options &opts, JobTable &jobs, PrefetchCache &cache, Counters &c)
	    : opts_(opts), jobs_(jobs), cache_(cache), c_(c)
	{
	}
	~Pipeline();
	Pipeline(const Pipeline &) = delete;
	Pipeline &operator=(const Pipeline &) = delete;

	// The wake eventfd, the copy engine, the staging ring (opts.slots ring slots, then
	// opts.prefetch_slots prefetch slots), the evicts' header blocks and the io_uring.
	// dir_fd stays the caller's; store: the bounded store's index, or null.
	[[nodiscard]] int init(int dir_fd, bool dir_direct, StoreIndex *store);
	// Starts the worker thread.
	void start();
	// Wakes the worker (a job was queued, or the table stopped); any thread.
	void wake();
	// Waits for the worker to end (after the job table stopped and every job finished).
	void join();
	[[nodiscard]] bool running() const { return worker_.joinable(); }
	// Callers use it for mark_source only; the rest is the worker's.
	[[nodiscard]] CopyEngine &engine() { return *engine_; }
	[[nodiscard]] int engine_kind() const { return engine_ ? engine_->kind() : 0; }

private:
	[[nodiscard]] int make_engine();
	[[nodiscard]] int alloc_slots();
	// The staging slots as io_uring fixed buffers, where the kernel allows.
	void register_slots();

	// Worker thread.
	void run();
	bool step();
	void accept_jobs();
	void start_job(unsigned j);
	bool issue(unsigned j);
	bool handoff(unsigned j);
	bool poll_copies();
	bool finish_job(unsigned j);
	// Every payload block is on disk: queues the header write (and fsync).
	void write_header(unsigned j);
	// The header is on disk: renames the temp file to the chunk (or commits it to the index).
	void publish(unsigned j);
	void complete(unsigned j, int result);
	void fail(unsigned j, int code, int err_no);
	void handle_cqe(const io_uring_cqe *cqe);
	io_uring_sqe *get_sqe();
	// A slot's read or write: a fixed-buffer op when the slots are registered.
	void prep_slot_io(io_uring_sqe *sqe, bool write, int fd, unsigned s, uint64_t len,
			  uint64_t off);
	void arm_wake();
	[[nodiscard]] int pop_free_slot();
	void release_slot(unsigned s);
	// Job j's header block (kBlock aligned).
	[[nodiscard]] char *header_block(unsigned j)
	{
		return static_cast<char *>(headers_) + size_t(j) * kBlock;
	}

	const kvgpu_options &opts_;
	JobTable &jobs_;
	PrefetchCache &cache_;
	Counters &c_;
	int dir_fd_ = -1;
	bool dir_direct_ = false;
	StoreIndex *store_ = nullptr;
	int pid_ = 0;  // names this process's temp files
	UniqueFd wake_;
	std::unique_ptr<CopyEngine> engine_;
	void *staging_ = nullptr;
	void *headers_ = nullptr;
	std::vector<Slot> slots_;
	std::vector<unsigned> free_slots_;
	io_uring ring_{};
	bool ring_ok_ = false;
	bool bufs_registered_ = false;  // the staging slots are the ring's fixed buffers
	std::thread worker_;

	// Worker-only.
	std::vector<unsigned> active_;
	std::vector<unsigned> accepted_;
	uint64_t wake_buf_ = 0;
	uint64_t io_in_flight_ = 0;
	uint64_t copies_in_flight_ = 0;
	uint64_t temp_seq_ = 0;
};

}  // namespace kvfdp::gpu
