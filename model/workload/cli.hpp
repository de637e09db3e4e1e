// The KV workloads' options for `kvfdp simulate` (--kv-trace, --blk-trace, --workload kv,
// --kv-*) and the factory that builds the chosen workload.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "model/sim/workload.hpp"

namespace CLI {
class App;
}

namespace kvfdp::workload {

struct WorkloadOptions {
	std::string kv_trace;                   // Mooncake .jsonl
	std::string blk_trace;                  // `kvfdp record` CSV
	std::string kv_model = "llama-3.1-8b";  // KV bytes per token
	std::string kv_scale = "1/256";         // chunk size factor: a number or "1/N"
	uint64_t kv_requests = 0;               // replay only the first N requests (0 = all)
	bool kv_promote = false;                // hint: rewrite a chunk as LONG on its first hit
	std::string kv_evict = "lru";           // --kv-trace: lru, fifo or fifo2
	std::string kv_mix = "0.05,0.35,0.60";  // --workload kv: prefix,conversation,single
	std::string kv_lifetimes = "43200,300,10";  // --workload kv: mean lifetimes in seconds
	// --workload kv: bytes written / capacity, warm-up included (simulate: 1 + --writes).
	double kv_drive_writes = 4.0;
	// --workload hicache / mixed: see MixedHostConfig (model/workload/mixed_host.hpp).
	uint32_t hicache_page_tokens = 64;
	double hicache_evict_ratio = 0.9;
	double mixed_a_speed = 1;
	double mixed_a_share = 0.3;
	uint32_t mixed_a_page_tokens = 64;
	uint32_t mixed_a_min_hits = 2;
	uint32_t mixed_prompt_every = 32;
	double mixed_prompt_ttl_s = 300;
	// --workload host (with --kv-trace): see HostConfig (model/workload/host.hpp). Sizes
	// are unscaled (the --kv-scale factor applies); "" in a list means its default.
	uint32_t host_engines = 1;
	std::string host_speeds;  // e.g. "1,3"; default all 1
	std::string host_shares;  // e.g. "0.5,0.5"; default equal
	double host_staging_s = 2.0;
	std::string host_log_rate = "1MiB";  // per second
	std::string host_log_file = "256MiB";
	uint32_t host_log_keep = 4;
	std::string host_weights = "16GiB";
	double host_swap_s = 600.0;
	std::string host_restart_every;          // capacities between restarts ("" = never)
	std::string host_restart_ids = "fresh";  // fresh or kept
	// --workload slots: per-worker lists (docs/RESULTS.md "Slot store"); "" = the defaults
	// of LMCache raw_block's 9 workers. A list given must have one entry per worker.
	std::string slot_objects;        // unscaled sizes, e.g. 4MiB,32MiB
	std::string slot_rates;          // relative byte rates
	std::string slot_windows;        // shares of the capacity (default --util / N)
	std::string slot_touches;        // LRU touches per write (0 = write order)
	std::string slot_classes;        // hint class of each worker's bucket
	std::string slot_writers;        // writer id of each worker (default 1..N)
	bool slot_fill_writer = false;   // a sequential fill by a writer of its own first
	double slot_static_tail = 0;     // share of the capacity written once, never again
	double slot_warmup = 1;          // capacities written after the fill before measuring
	double slot_measure_writes = 3;  // capacities measured (simulate: --writes)
};

// What simulate knows that the workload needs.
struct WorkloadContext {
	std::string workload;         // simulate's --workload value ("kv": the generator, "host")
	double utilisation = 0.9;     // live data / logical capacity, (0, 1]
	uint64_t capacity_bytes = 0;  // logical capacity (the blk trace's address space)
	uint64_t seed = 1;
};

// The host workloads' unscaled sizes from --host-log-rate, --host-log-file and --host-weights;
// an error names the option.
[[nodiscard]] Result<void> host_sizes(const WorkloadOptions &o, uint64_t &log_rate,
				      uint64_t &log_file, uint64_t &weights);

// The --kv-evict names (lru, fifo, fifo2), in EvictPolicy order.
[[nodiscard]] const std::vector<std::string> &evict_names();

// True when the options choose the chunk store of --kv-trace (its eviction is --kv-evict).
[[nodiscard]] bool selects_chunk_store(const WorkloadOptions &o, std::string_view workload);

// Adds --kv-trace, --blk-trace and the --kv-* tuning options to simulate_cmd.
void add_workload_options(CLI::App &simulate_cmd, WorkloadOptions &o);

// True when the options choose one of this library's workloads: a --kv-trace, a
// --blk-trace, --workload kv, --workload host or --workload slots.
[[nodiscard]] bool selects_workload(const WorkloadOptions &o, std::string_view workload);

// Builds the chosen workload (reading and checking any trace now, so errors come before a
// run). Errors name the option or the trace line, and say what to do.
[[nodiscard]] Result<std::unique_ptr<sim::Workload>> make_workload(const WorkloadOptions &o,
								   const WorkloadContext &ctx);

// The chunk size for a preset and scale string ("1/256" or "0.5"); an error names --kv-model
// or --kv-scale.
[[nodiscard]] Result<uint64_t> chunk_bytes_for(const std::string &model, const std::string &scale);

}  // namespace kvfdp::workload
