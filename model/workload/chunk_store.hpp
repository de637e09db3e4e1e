// An LMCache-like KV chunk store replaying a Mooncake trace: one file per hash id (a
// 512-token block), eviction by unlink when the store is full (LRU, FIFO or FIFO with a
// second chance), files on BlockFs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/sim/workload.hpp"
#include "model/workload/chunk_files.hpp"
#include "model/workload/mooncake.hpp"

namespace kvfdp::workload {

// Which chunk a full store evicts (libkvgpu's kvgpu_evict_policy): the least recently used,
// the oldest written, or the oldest written unless it was hit since, then it is rewritten
// (a new file of the same class) and stays.
enum class EvictPolicy : uint8_t { lru, fifo, fifo2 };

struct ChunkStoreConfig : ChunkFileConfig {
	EvictPolicy evict = EvictPolicy::lru;
	// hint: blocks at request positions below this are LONG (position 0 is the system
	// prompt every request of the trace shares).
	uint32_t long_positions = 1;
	// hint: a missing hash that this many requests have referenced before (it was cached,
	// evicted and is asked for again) is LONG.
	uint32_t prefix_refs = 2;
	// hint: a group whose learned reuse rate is at least this is MEDIUM, else SHORT.
	double medium_reuse = 0.2;
	// hint: on a chunk's first hit, rewrite it as a new LONG file and unlink the old one
	// (an engine re-storing reused KV); costs one extra chunk write per reused chunk.
	bool promote_on_hit = false;
};

struct ChunkStoreStats : ChunkFileStats {
	uint64_t requests = 0;
	uint64_t lookups = 0;
	uint64_t hits = 0;
	uint64_t misses = 0;
	uint64_t promotions = 0;
	uint64_t reinserts = 0;  // fifo2: hit chunks rewritten instead of evicted
	uint64_t fragmented_chunks = 0;
	uint64_t class_bytes[6] = {};
	// hint's learned reuse rates at the end: first-turn body, continuing-turn body, tail.
	double learned_reuse[3] = {};
};

// One chunk store among several on a shared BlockFs (the shared-host workload): its own
// capacity in blocks, writer id and counters. Unlike ChunkStoreWorkload it does not end the
// warm-up at its first eviction: the caller does.
class ChunkEngine {
public:
	ChunkEngine(const ChunkStoreConfig &cfg, BlockFs &fs, uint64_t cap_blocks, uint64_t writer);
	~ChunkEngine();
	ChunkEngine(const ChunkEngine &) = delete;
	ChunkEngine &operator=(const ChunkEngine &) = delete;
	// Looks up the request's blocks and writes the missing ones (evicting as needed).
	void request(const MooncakeRequest &req, sim::Placement placement,
		     const std::vector<uint8_t> *oracle);
	[[nodiscard]] const ChunkStoreStats &stats() const;
	[[nodiscard]] uint64_t used_blocks() const;
	// The id the store's next files are written with (a restarted engine's new cgroup).
	void set_writer(uint64_t writer);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

class ChunkStoreWorkload : public sim::Workload {
public:
	ChunkStoreWorkload(std::string name, std::vector<MooncakeRequest> trace,
			   ChunkStoreConfig cfg);

	[[nodiscard]] std::string name() const override { return name_; }
	[[nodiscard]] Result<void> run(sim::Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, sim::BlockSink &sink,
				       sim::Progress *progress) override;
	// hit_ratio, evictions, chunks_written, ... of the last run.
	[[nodiscard]] nlohmann::json extra() const override;
	[[nodiscard]] const ChunkStoreStats &stats() const { return stats_; }

private:
	std::string name_;
	std::vector<MooncakeRequest> trace_;
	ChunkStoreConfig cfg_;
	ChunkStoreStats stats_;
};

}  // namespace kvfdp::workload
