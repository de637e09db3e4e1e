// JobTable: the job slots that tickets map to, the batches, and the hand-off of queued jobs
// from caller threads to the worker, all under one lock (which also guards the prefetch cache).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "common/unique_fd.hpp"
#include "kvgpu/kvgpu.h"

namespace kvfdp::gpu {

enum class Kind : uint8_t { evict, load, prefetch };
enum class JobState : uint8_t { free, reserved, queued, active, done };
enum class Phase : uint8_t { data, header, finished };

struct Job {
	// Guarded by the table's lock.
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
	UniqueFd fd;  // load: opened by the caller; evict: by the worker
	bool direct = false;
	uint32_t stored_crc = 0;
	bool check_crc = false;
	int pslot = -1;   // prefetch: the slot it reads into; load: the staged slot it copies from
	int pentry = -1;  // the prefetch entry of pslot
	int batch = -1;   // load_batch: the batch (index into the batches) and the entry in it
	uint32_t batch_pos = 0;
	uint64_t reserved = 0;   // evict in a bounded store: the bytes reserved for its file
	uint64_t store_seq = 0;  // load in a bounded store: the version it found in the index
	// Worker-only progress.
	Phase phase = Phase::data;
	uint64_t blocks = 0;    // staging-slot-sized pieces
	uint64_t issued = 0;    // pieces given a slot
	uint64_t handed = 0;    // pieces past the in-order step (crc, then write or H2D)
	uint64_t finished = 0;  // pieces whose slot came back
	uint32_t ops = 0;       // copies and io_uring ops in flight
	uint32_t crc = 0;
	int err = 0;       // first error (kvgpu_error)
	uint64_t seq = 0;  // temp-name sequence
};

struct Batch {
	int64_t ticket = 0;
	uint32_t remaining = 0;  // loads not yet complete (+1 while load_batch is queueing)
	int first_err = 0;
	int64_t *results = nullptr;
};

class JobTable {
public:
	// max_jobs job slots and as many batch slots.
	void init(unsigned max_jobs);
	[[nodiscard]] Job &job(unsigned i) { return jobs_[i]; }
	// The table's lock; the prefetch cache is guarded by it too.
	[[nodiscard]] std::mutex &mu() { return mu_; }

	// Caller: the job slot of the next ticket, once its previous job is done (back-pressure);
	// KVGPU_ERR_INVAL after stop. tracked: the caller will wait for the ticket (evict, load);
	// batch and prefetch jobs report elsewhere.
	[[nodiscard]] int reserve(Kind kind, unsigned *idx, int64_t *ticket, bool tracked);
	// Caller: hands a reserved job to the worker (the caller wakes it).
	void publish(unsigned idx);
	// Caller: a reserved job that will not be queued is done (no result).
	void release_reserved(unsigned idx);
	// Caller: waits for ticket's job (0: for every job issued so far); its result.
	[[nodiscard]] int wait(int64_t ticket);

	// Caller: a batch slot for a new batch writing into results (reused once its previous
	// batch is done); held until batch_close. KVGPU_ERR_INVAL after stop.
	[[nodiscard]] int begin_batch(int64_t *results, int64_t *bt, int *b);
	// Caller: one more (batch_enter) or one less (batch_leave) load of batch b in flight.
	void batch_enter(int b);
	void batch_leave(int b);
	// Caller: entry i of batch b failed with rc before its load was queued.
	void batch_fail(int b, size_t i, int rc);
	// Caller: every load of batch b is queued; drops the hold of begin_batch.
	void batch_close(int b);
	[[nodiscard]] int batch_wait(int64_t bt);
	[[nodiscard]] int batch_poll(int64_t bt);

	// No job is reserved from now on.
	void stop();
	// After the worker is gone: the last error of a job nobody waited for.
	[[nodiscard]] int unwaited_error();

	// Worker: true once stopped with nothing queued.
	[[nodiscard]] bool drained();
	// Worker: moves the queued jobs into *out (active); false (no lock taken) when none.
	[[nodiscard]] bool take_queued(std::vector<unsigned> *out);
	// Worker, mu() held: job j is done with result (its batch entry too); wakes its waiters.
	void finish_locked(unsigned j, int result);

private:
	unsigned max_jobs_ = 0;
	std::vector<Job> jobs_;
	std::mutex mu_;
	std::condition_variable cv_;
	std::vector<unsigned> pending_;
	// Set (under mu_) when pending_ gains a job; the worker clears it before taking mu_.
	std::atomic<bool> has_pending_{false};
	int64_t next_ticket_ = 1;
	std::vector<Batch> batches_;
	int64_t next_batch_ = 1;
	bool stop_ = false;
	int unwaited_error_ = 0;
};

}  // namespace kvfdp::gpu
