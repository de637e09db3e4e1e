// kvfdp::gpu::Context: the staging ring, the worker thread and its io_uring, the job table.
#pragma once

#include <liburing.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/unique_fd.hpp"
#include "kvgpu/chunk_format.hpp"
#include "kvgpu/chunk_reader.hpp"
#include "kvgpu/copy_engine.hpp"
#include "kvgpu/counters.hpp"
#include "kvgpu/kvgpu.h"
#include "kvgpu/store_index.hpp"

namespace kvfdp::gpu {

class Context {
public:
	// Opens the store; returns 0 and sets *out, or a kvgpu_error.
	[[nodiscard]] static int create(const char *dir, const kvgpu_options &opts,
					std::unique_ptr<Context> *out);
	~Context();
	Context(const Context &) = delete;
	Context &operator=(const Context &) = delete;

	// The C API, arguments already checked for null.
	[[nodiscard]] int64_t evict(const void *src, size_t bytes, std::string_view key, int lifetime,
				    void *stream);
	[[nodiscard]] int wait(int64_t ticket);
	[[nodiscard]] int64_t load(std::string_view key, void *dst, size_t bytes, void *stream);
	[[nodiscard]] int64_t lookup(std::string_view key);
	[[nodiscard]] int remove(std::string_view key);
	[[nodiscard]] int contains(std::string_view key);
	// keys[i] NUL-terminated; a bad key, dst or size fails only its own entry.
	[[nodiscard]] int64_t load_batch(size_t n, const char *const *keys, void *const *dsts,
					 const size_t *sizes, int64_t *results, void *stream);
	[[nodiscard]] int batch_wait(int64_t batch);
	[[nodiscard]] int batch_poll(int64_t batch);
	[[nodiscard]] int prefetch(size_t n, const char *const *keys);
	void stats(kvgpu_stats_t *out);
	// Test seam (not in the C API): load_batch calls fn(arg) on its own thread, no lock held,
	// after each group's chunks are opened and before their loads are queued, so a test can
	// replace a key inside that window. Set it before the first load_batch; null otherwise.
	void set_batch_opened_hook(void (*fn)(void *arg), void *arg)
	{
		batch_opened_ = fn;
		batch_opened_arg_ = arg;
	}
	// Finishes everything in flight and stops the worker; returns the last unwaited error.
	[[nodiscard]] int shutdown();

private:
	enum class Kind : uint8_t { evict, load, prefetch };
	enum class JobState : uint8_t { free, reserved, queued, active, done };
	enum class Phase : uint8_t { data, header, finished };
	// staged: a prefetch slot holding a whole verified chunk until a load claims it.
	enum class SlotState : uint8_t { free, copying, copied, io, io_done, staged };

	struct Job {
		// Guarded by mu_.
		int64_t ticket = 0;
		JobState state = JobState::free;
		int result = 0;
		bool waited = true;
		// Set by the caller before the job is queued, read-only afterwards.
		Kind kind = Kind::evict;
		const char *src = nullptr;
		char *dst = nullptr;
		uint64_t bytes = 0;
		int lifetime = 0;
		uint32_t key_len = 0;
		char key[KVGPU_MAX_KEY + 1] = {};
		UniqueFd fd;          // load: opened by the caller; evict: by the worker
		bool direct = false;
		uint32_t stored_crc = 0;
		bool check_crc = false;
		int pslot = -1;        // prefetch: the slot it reads into; load: the staged slot it copies from
		int pentry = -1;       // the prefetch entry of pslot
		int batch = -1;        // load_batch: the batch (index into batches_) and the entry in it
		uint32_t batch_pos = 0;
		uint64_t reserved = 0;  // evict in a bounded store: the bytes reserved for its file
		uint64_t store_seq = 0; // load in a bounded store: the version it found in the index
		// Worker-only progress.
		Phase phase = Phase::data;
		uint64_t blocks = 0;   // staging-slot-sized pieces
		uint64_t issued = 0;   // pieces given a slot
		uint64_t handed = 0;   // pieces past the in-order step (crc, then write or H2D)
		uint64_t finished = 0; // pieces whose slot came back
		uint32_t ops = 0;      // copies and io_uring ops in flight
		uint32_t crc = 0;
		int err = 0;           // first error (kvgpu_error)
		uint64_t seq = 0;      // temp-name sequence
		void *header_buf = nullptr; // kBlock aligned: the evict's header block
	};

	struct Batch {
		int64_t ticket = 0;
		uint32_t remaining = 0; // loads not yet complete (+1 while load_batch is queueing)
		int first_err = 0;
		int64_t *results = nullptr;
	};

	enum class PrefetchState : uint8_t { free, reading, staged, claimed };
	struct PrefetchEntry {
		PrefetchState state = PrefetchState::free;
		bool stale = false; // replaced or removed while being read: discard when done
		int64_t ticket = 0;
		uint64_t bytes = 0;
		uint64_t gen = 0; // when it was staged: the oldest staged entry is reused first
		uint32_t key_len = 0;
		char key[KVGPU_MAX_KEY + 1] = {};
		[[nodiscard]] bool is(std::string_view k) const
		{
			return state != PrefetchState::free && std::string_view(key, key_len) == k;
		}
	};

	struct Slot {
		SlotState state = SlotState::free;
		unsigned job = 0;
		uint64_t piece = 0;
		uint32_t len = 0;
		char *buf = nullptr;
	};

	Context() = default;
	[[nodiscard]] int init(const char *dir, const kvgpu_options &opts);
	// tracked: the caller will wait for the ticket (evict, load); batch and prefetch jobs report elsewhere.
	[[nodiscard]] int reserve_job(Kind kind, unsigned *idx, int64_t *ticket, bool tracked = true);
	// Queues one load (from a staged prefetch slot when there is one); *len is the chunk's length.
	// pre/pre_rc: the chunk opened and checked by open_batch (0), its error (< 0), or 1: not;
	// pre_seq: the index version open_batch saw before opening it (a bounded store).
	[[nodiscard]] int start_load(std::string_view key, void *dst, size_t bytes, void *stream, int batch,
				     uint32_t pos, int64_t *ticket, uint64_t *len, OpenChunk *pre = nullptr,
				     int pre_rc = 1, uint64_t pre_seq = 0);
	// Opens up to kHeaderReads chunks of a batch and reads their headers in one submission;
	// pre_seq[i]: key i's index version, read before its file was opened.
	void open_batch(size_t n, const char *const *keys, const int *arg_rc, OpenChunk *pre, int *pre_rc,
			uint64_t *pre_seq);
	void forget_prefetch(std::string_view key);
	// Fills a load or prefetch job from the opened chunk: its file, length and checksum.
	void read_job(Job &j, OpenChunk &&oc, char *dst);
	void release_slot(unsigned s);
	void publish_job(unsigned idx);
	void release_reserved(unsigned idx);
	void wake();
	int remove_stale_temps();
	[[nodiscard]] int probe_direct();

	// Worker thread.
	void run();
	bool step();
	void accept_jobs();
	void start_job(unsigned j);
	bool issue(unsigned j);
	bool handoff(unsigned j);
	bool poll_copies();
	bool finish_job(unsigned j);
	void complete(unsigned j, int result);
	void fail(unsigned j, int code, int err_no);
	void handle_cqe(const io_uring_cqe *cqe);
	io_uring_sqe *get_sqe();
	// A slot's read or write: a fixed-buffer op when the slots are registered.
	void prep_slot_io(io_uring_sqe *sqe, bool write, int fd, unsigned s, uint64_t len, uint64_t off);
	void arm_wake();
	[[nodiscard]] int pop_free_slot();

	kvgpu_options opts_{};
	UniqueFd dir_;
	int pid_ = 0; // names this process's temp files
	UniqueFd wake_;
	bool dir_direct_ = false;
	std::unique_ptr<CopyEngine> engine_;
	std::unique_ptr<StoreIndex> store_; // capacity_bytes > 0
	void *staging_ = nullptr;
	void *headers_ = nullptr;
	std::vector<Slot> slots_;
	std::vector<unsigned> free_slots_;
	std::vector<Job> jobs_;
	io_uring ring_{};
	bool ring_ok_ = false;
	bool bufs_registered_ = false; // the staging slots are the ring's fixed buffers
	static constexpr size_t kHeaderReads = ChunkReader::kHeaderReads;
	ChunkReader reader_;
	void (*batch_opened_)(void *) = nullptr; // the test seam of set_batch_opened_hook
	void *batch_opened_arg_ = nullptr;
	std::thread worker_;

	// Caller <-> worker handoff, guarded by mu_.
	mutable std::mutex mu_;
	std::condition_variable cv_;
	std::vector<unsigned> pending_;
	// Set (under mu_) when pending_ gains a job; the worker clears it before taking mu_.
	std::atomic<bool> has_pending_{false};
	int64_t next_ticket_ = 1;
	std::vector<Batch> batches_;
	int64_t next_batch_ = 1;
	std::vector<PrefetchEntry> prefetch_;
	uint64_t prefetch_gen_ = 0;
	bool stop_ = false;
	int unwaited_error_ = 0;

	// Worker-only.
	std::vector<unsigned> active_;
	std::vector<unsigned> accepted_;
	uint64_t wake_buf_ = 0;
	uint64_t io_in_flight_ = 0;
	uint64_t copies_in_flight_ = 0;
	uint64_t temp_seq_ = 0;

	// Counters (worker writes, anyone reads).
	mutable Counters c_;
};

} // namespace kvfdp::gpu
