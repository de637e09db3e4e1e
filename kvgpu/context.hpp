// kvfdp::gpu::Context: the front behind the C API. It opens the store directory, turns each
// call into jobs for the pipeline, and answers lookups, removes and stats itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "common/unique_fd.hpp"
#include "kvgpu/chunk_reader.hpp"
#include "kvgpu/counters.hpp"
#include "kvgpu/job_table.hpp"
#include "kvgpu/kvgpu.h"
#include "kvgpu/pipeline.hpp"
#include "kvgpu/prefetch_cache.hpp"
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
	[[nodiscard]] int64_t evict(const void *src, size_t bytes, std::string_view key,
				    int lifetime, void *stream);
	[[nodiscard]] int wait(int64_t ticket) { return jobs_.wait(ticket); }
	[[nodiscard]] int64_t load(std::string_view key, void *dst, size_t bytes, void *stream);
	[[nodiscard]] int64_t lookup(std::string_view key);
	[[nodiscard]] int remove(std::string_view key);
	[[nodiscard]] int contains(std::string_view key);
	// keys[i] NUL-terminated; a bad key, dst or size fails only its own entry.
	[[nodiscard]] int64_t load_batch(size_t n, const char *const *keys, void *const *dsts,
					 const size_t *sizes, int64_t *results, void *stream);
	[[nodiscard]] int batch_wait(int64_t batch) { return jobs_.batch_wait(batch); }
	[[nodiscard]] int batch_poll(int64_t batch) { return jobs_.batch_poll(batch); }
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
	static constexpr size_t kHeaderReads = ChunkReader::kHeaderReads;

	Context() : pipeline_(opts_, jobs_, cache_, c_) {}
	[[nodiscard]] int init(const char *dir, const kvgpu_options &opts);
	[[nodiscard]] int open_store();
	int remove_stale_temps();
	[[nodiscard]] int probe_direct();
	// Hands a reserved job to the worker.
	void publish_job(unsigned idx);
	// Queues one load (from a staged prefetch slot when there is one); *len is the chunk's length.
	// pre/pre_rc: the chunk opened and checked by open_batch (0), its error (< 0), or 1: not;
	// pre_seq: the index version open_batch saw before opening it (a bounded store).
	[[nodiscard]] int start_load(std::string_view key, void *dst, size_t bytes, void *stream,
				     int batch, uint32_t pos, int64_t *ticket, uint64_t *len,
				     OpenChunk *pre = nullptr, int pre_rc = 1,
				     uint64_t pre_seq = 0);
	// The prefetch entry staged for key that a load into bytes claims (waiting for its read
	// when one is in flight), or -1; *staged_bytes its length.
	[[nodiscard]] int claim_staged(std::string_view key, size_t bytes, uint64_t *staged_bytes);
	// start_load's job that copies from claimed prefetch entry staged.
	[[nodiscard]] int reserve_staged_load(int staged, uint64_t staged_bytes, void *dst,
					      bool tracked, unsigned *idx, int64_t *ticket);
	// start_load's job that reads the chunk file (pre's when pre_rc <= 0, else opened here);
	// seq, indexed_bytes: the index version and length found for key (a bounded store).
	[[nodiscard]] int reserve_read_load(std::string_view key, void *dst, size_t bytes,
					    bool tracked, OpenChunk *pre, int pre_rc, uint64_t seq,
					    uint64_t indexed_bytes, unsigned *idx, int64_t *ticket);
	// Checks the arguments of a batch's group of m loads (arg_rc), then open_batch.
	void open_group(size_t m, const char *const *keys, void *const *dsts, const size_t *sizes,
			int *arg_rc, OpenChunk *pre, int *pre_rc, uint64_t *pre_seq);
	// Opens up to kHeaderReads chunks of a batch and reads their headers in one submission;
	// pre_seq[i]: key i's index version, read before its file was opened.
	void open_batch(size_t n, const char *const *keys, const int *arg_rc, OpenChunk *pre,
			int *pre_rc, uint64_t *pre_seq);
	// Starts one prefetch of key (count: how many are staged or being staged); false when
	// every prefetch buffer is busy.
	bool prefetch_one(std::string_view key, uint64_t start_gen, int *count);
	void forget_prefetch(std::string_view key);
	// Fills a load or prefetch job from the opened chunk: its file, length and checksum.
	void read_job(Job &j, OpenChunk &&oc, char *dst);

	kvgpu_options opts_{};
	UniqueFd dir_;
	bool dir_direct_ = false;
	std::unique_ptr<StoreIndex> store_;  // capacity_bytes > 0
	Counters c_;
	JobTable jobs_;
	PrefetchCache cache_;
	ChunkReader reader_;
	Pipeline pipeline_;
	void (*batch_opened_)(void *) = nullptr;  // the test seam of set_batch_opened_hook
	void *batch_opened_arg_ = nullptr;
};

}  // namespace kvfdp::gpu
