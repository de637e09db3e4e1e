// The mixed host of issue 36 (`--workload mixed`) and SGLang HiCache alone (`--workload
// hicache`): KV engines of two kinds on one SSD, both replaying the Mooncake trace.
// - Engine A (writer 1), Dynamo KVBM's disk tier (lib/llm/src/block_manager/storage/disk.rs):
//   one file created with mkostemp in DYN_KVBM_DISK_CACHE_DIR and fallocate()d to its full
//   size (no data written), then used as fixed slots of one page each. A Mooncake block is
//   offloaded on its min_hits-th sighting (the disk offload filter: the second by default);
//   a page on disk that is asked for again becomes the most recently used; a new page takes a
//   never-written slot, then the least recently used one, overwritten in place. Nothing is
//   ever trimmed. The file lies at the start of the LBA space.
// - Engine B (writer 2), HiCache's file backend (hicache.hpp): one file per page, LRU batches
//   unlinked at its size cap.
// - Prompt cache (writer 3): one request in prompt_every saves its whole prompt's KV as one
//   file (a saved session, as llama.cpp's --prompt-cache does), deleted prompt_ttl_s later.
// - The prompt cache's index (writer 4): a file of 4 KiB per 64 entries, rewritten (a new
//   file, then the old one unlinked) on every save and expiry.
// - Logs (writer 5) and model weights (writer 6): as the shared host (host.hpp).
// Hints, what each writer could say of its files: A and B MEDIUM (a KV tier knows nothing of
// one page's life), prompt cache LONG, its index SHORT, weights EXTREME, logs none.
// A's slot file takes a_share of the KV room and B's cap the rest: at 0.3, by Little's law
// (capacity / write rate) A's data lives 1.6x as long as B's at speed 1 and B's 1.9x as long
// as A's at speed 3, the "within 2x" of issue 36's host.
// Engine A replays the trace at a_speed (looping it with fresh hash ids), B at 1; the run
// lasts one pass at the slower one. Measurement starts when A's file has been written once
// and B has evicted once. `--workload hicache` is engine B alone, its cap --util of the
// device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/sim/workload.hpp"
#include "model/workload/cli.hpp"
#include "model/workload/hicache.hpp"
#include "model/workload/mooncake.hpp"

namespace kvfdp::workload {

struct MixedHostConfig {
	bool engine_a = true;    // false: HiCache alone (no other writer either)
	double utilisation = 1;  // everything's share of the device
	double scale = 1.0 / 256;
	uint64_t bytes_per_token = 128 << 10;  // unscaled KV bytes per token
	uint32_t page_tokens_b = 64;           // HiCache page (sglang --page-size)
	double eviction_ratio = 0.9;  // HiCache's SGLANG_HICACHE_FILE_BACKEND_EVICTION_RATIO
	uint32_t page_tokens_a = 64;  // KVBM block
	uint32_t min_hits_a = 2;      // KVBM's disk offload filter
	double a_speed = 1;
	double a_share = 0.3;        // A's share of the KV room (the rest is B's cap)
	uint32_t prompt_every = 32;  // 0: no prompt cache
	double prompt_ttl_s = 300;
	uint64_t log_rate = 1 << 20;  // unscaled bytes per second; 0: no logs
	uint64_t log_file_bytes = 256ull << 20;
	uint32_t log_keep = 4;
	uint64_t weights_bytes = 16ull << 30;  // 0: no weights
	double swap_s = 600;
};

struct MixedHostStats {
	HiCacheStats b;
	uint64_t a_slots = 0, a_slot_blocks = 0, a_requests = 0, a_lookups = 0, a_hits = 0;
	uint64_t a_pages_written = 0, a_overwrites = 0;
	uint64_t b_cap_bytes = 0, reserve_bytes = 0;
	uint64_t bytes[6] = {};  // per writer 1..6
	uint64_t dropped = 0;    // other writers' files that found the filesystem full
	double sim_seconds = 0, measured_from_s = 0;
};

class MixedHostWorkload : public sim::Workload {
public:
	MixedHostWorkload(std::vector<MooncakeRequest> trace, MixedHostConfig cfg);

	[[nodiscard]] std::string name() const override
	{
		return cfg_.engine_a ? "mixed" : "hicache";
	}
	[[nodiscard]] Result<void> run(sim::Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, sim::BlockSink &sink,
				       sim::Progress *progress) override;
	[[nodiscard]] nlohmann::json extra() const override;
	[[nodiscard]] const MixedHostStats &stats() const { return stats_; }

	// Checks the options against the trace and a capacity in bytes: one line naming the
	// first option that does not fit (pages, the slot file, B's cap, the other writers' room).
	[[nodiscard]] static Result<void> validate(const MixedHostConfig &cfg,
						   const std::vector<MooncakeRequest> &trace,
						   uint64_t capacity_bytes);

private:
	std::vector<MooncakeRequest> trace_;
	MixedHostConfig cfg_;
	MixedHostStats stats_;
};

// --hicache-* and --mixed-* (the mixed host also reads --host-log-*,
// --host-weights and --host-swap-s).
void add_mixed_host_options(CLI::App &cmd, WorkloadOptions &o);
// --workload hicache or mixed from the options, with --kv-trace loaded and checked.
[[nodiscard]] Result<std::unique_ptr<sim::Workload>> make_mixed_host(const WorkloadOptions &o,
								     const WorkloadContext &ctx);

}  // namespace kvfdp::workload
