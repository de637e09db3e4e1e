// The disk tiers of two KV engines that keep their blocks in preallocated slot files
// (`--workload kvbm`, `--workload trtllm`; docs/RESULTS.md "Slot engines"). What each engine's
// code does, and what is assumed here:
//
// Dynamo KVBM (ai-dynamo/dynamo, lib/llm/src/block_manager):
// - G1 (GPU) -> G2 (pinned host) -> G3 (disk). The disk pool is one file of fixed-size blocks
//   (one KV block, all layers, page_size tokens: 32 by default in the kvbm bindings) made
//   once at start-up and overwritten in place; nothing is ever trimmed.
// - A block goes to disk when it is registered in G2 and the frequency filter lets it
//   through (offload/filter.rs, bindings' create_disk_offload_filter): threshold 2, the
//   count starts at 1 and doubles each time the block's sequence hash is offered again,
//   and every 600 s each count drops by 1 (pruned at 0). So a block reaches the disk on its
//   second G2 registration within the decay window; a block already on disk is not written
//   again. Here G2 registration = a miss in host memory (G1 and G2 are one LRU of
//   `host` blocks), and the decay runs every `decay` disk-slots' worth of accesses (the 600 s
//   as accesses is an assumption).
// - Disk slots are acquired as the inactive pool does (pool/managed/inactive.rs): never-used
//   blocks first, in index order, then the lowest priority key, i.e. the least recently
//   returned block (all blocks have the default priority). A disk hit onboards the block and
//   returns it with a new tick: an LRU touch, no write.
// - One writer (the engine), no hint: KVBM passes no lifetime to the file it writes.
//
// TensorRT-LLM (NVIDIA/TensorRT-LLM, tensorrt_llm/runtime/kv_cache_manager_v2): the KV cache
// manager v2 has a DISK cache tier (DiskCacheTierConfig: a quota and a folder).
// - Each pool is one unnamed file (O_TMPFILE, else mkstemp + unlink) sized slots x slot_size,
//   slot i at offset i x slot_size (_storage/_core.py DiskSlotPool). Every rank runs its own
//   manager, so each rank has its own file; with tensor parallelism a rank's slot holds its
//   share of the heads (block_bytes / ranks) and the ranks make the same choices in step.
// - Pages evicted from host memory fall to the disk; the disk's own evictions drop pages
//   (_storage_manager.py). A page read back from disk moves up and frees its disk slot.
// - Freed slots are reused first-freed first, before never-used ones (SlotAllocator: ready
//   recycled slots, then new slots); a full disk evicts its least recently used page.
// - Ranks are writers 1..R; no hint.
//
// Both: block requests come from a Zipf popularity over `keys` x the disk's slots distinct
// blocks (an assumption: neither engine's code fixes the traffic). With `fill` the whole
// namespace is first written in LBA order by a writer of its own (the slot files' slots one
// by one, then the rest of the namespace, which never dies), as the issue-36 rebuilds
// precondition the drive.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.hpp"
#include "model/sim/workload.hpp"

namespace kvfdp::workload {

struct DiskTierConfig {
	enum class Engine : uint8_t { kvbm, trtllm };
	Engine engine = Engine::kvbm;
	uint64_t block_bytes =
		4ull << 20;         // one KV block over all ranks, unscaled (32 tokens x 128 KiB)
	double scale = 1.0 / 256;   // block size factor (--kv-scale)
	double utilisation = 0.9;   // the slot files (all ranks) as a share of the logical capacity
	double keys = 8;            // distinct blocks requested, per disk slot
	double zipf = 0.5;          // popularity skew of the requests
	double host = 0.1;          // host memory (G1 + G2) in blocks, per disk slot
	uint32_t ranks = 1;         // files (writers) written in step (TensorRT-LLM's ranks)
	uint32_t filter = 2;        // KVBM's frequency threshold (1: every G2 block goes to disk)
	double decay = 4;           // KVBM: accesses between filter decays, per disk slot
	bool fill = true;           // precondition: a sequential fill of the namespace first
	double warmup_writes = 1;   // capacities written after every slot is used, before measuring
	double measure_writes = 3;  // capacities measured
	uint64_t seed = 1;
};

struct DiskTierStats {
	uint64_t slots = 0, slot_bytes = 0, accesses = 0, host_hits = 0, disk_hits = 0;
	uint64_t disk_writes = 0, filtered = 0, fill_bytes = 0, fill_writer = 0;
	uint64_t distinct_written = 0;  // blocks written to the disk at least once
};

class DiskTierWorkload : public sim::Workload {
public:
	explicit DiskTierWorkload(DiskTierConfig cfg) : cfg_(cfg) {}

	[[nodiscard]] std::string name() const override;
	[[nodiscard]] Result<void> run(sim::Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, sim::BlockSink &sink,
				       sim::Progress *progress) override;
	[[nodiscard]] nlohmann::json extra() const override;

	// Checks the configuration against a capacity (bytes); the error names the option.
	[[nodiscard]] static Result<void> validate(const DiskTierConfig &cfg,
						   uint64_t capacity_bytes);

private:
	DiskTierConfig cfg_;
	DiskTierStats stats_;
};

}  // namespace kvfdp::workload
