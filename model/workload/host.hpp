// A shared host (`--workload host`): several writers on one SSD, each a writer id the
// placement can key on.
// - N engines, each an LMCache-like chunk store (ChunkEngine) replaying the Mooncake trace
//   at its own speed (a faster engine loops the trace, with fresh hash ids each pass) with
//   its own share of the store capacity;
// - a prefill->decode staging area: each request's prompt KV is written as one file and
//   deleted staging_s seconds later;
// - a log writer appending at log_rate, rotating files of log_file_bytes, keeping log_keep;
// - model weights: a file of weights_bytes rewritten every swap_s seconds (new file
//   written, then the old one deleted).
// Sizes given "unscaled" are multiplied by the --kv-scale factor, like the KV chunks, so
// every part keeps its proportion to the device. The run lasts one pass of the trace at the
// slowest engine's speed; measurement starts once every engine's store is full.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/sim/workload.hpp"
#include "model/workload/chunk_store.hpp"
#include "model/workload/mooncake.hpp"

namespace kvfdp::workload {

struct HostConfig {
	ChunkStoreConfig store;    // chunk size; utilisation = everything's share of the device
	double scale = 1.0 / 256;  // the --kv-scale factor, applied to the sizes below
	uint32_t engines = 1;
	std::vector<double> speeds;  // per engine, replay speed factor (empty: all 1)
	std::vector<double> shares;  // per engine, share of the KV store capacity (empty: equal)
	uint64_t bytes_per_token = 128 << 10;    // unscaled KV bytes per prompt token (staging)
	double staging_s = 2.0;                  // 0: no staging area
	uint64_t log_rate = 1 << 20;             // unscaled bytes per second; 0: no logs
	uint64_t log_file_bytes = 256ull << 20;  // unscaled size at which a log file rotates
	uint32_t log_keep = 4;                   // rotated log files kept
	uint64_t weights_bytes = 16ull << 30;    // unscaled (Llama-3.1-8B bf16); 0: no weights
	double swap_s = 600.0;                   // seconds between weight swaps
	// Writers restart every restart_every device capacities written (0: never), writer i
	// of W a fraction i / W of that period after writer 0. A restart gives the writer a
	// fresh id, as a restarted pod or service gets a new cgroup, unless restart_keeps_id
	// (a stable writer identity); its files are created and deleted as before.
	double restart_every = 0;
	bool restart_keeps_id = false;
};

// Writer ids: engines 1..N, then staging N+1, logs N+2, weights N+3; after its k-th restart
// writer w has id w + k x (N + 3).
struct HostStats {
	std::vector<ChunkStoreStats> engines;
	uint64_t staging_bytes = 0, log_bytes = 0, weight_bytes = 0;
	uint64_t staging_files = 0, log_files = 0, swaps = 0;
	uint64_t requests = 0;       // engine requests replayed
	uint64_t restarts = 0;       // writer restarts (all writers)
	uint64_t writer_ids = 0;     // distinct writer ids written with
	uint64_t reserve_bytes = 0;  // capacity kept for staging, logs and weights
	double sim_seconds = 0;
	double measured_from_s = 0;
};

class HostWorkload : public sim::Workload {
public:
	HostWorkload(std::vector<MooncakeRequest> trace, HostConfig cfg);

	[[nodiscard]] std::string name() const override { return "host"; }
	[[nodiscard]] Result<void> run(sim::Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, sim::BlockSink &sink,
				       sim::Progress *progress) override;
	// Per engine hit ratio and bytes, the other writers' bytes, the reserve, when
	// measurement started.
	[[nodiscard]] nlohmann::json extra() const override;
	[[nodiscard]] const HostStats &stats() const { return stats_; }

	// Checks the config (speeds, shares, sizes): an error names the option.
	[[nodiscard]] static Result<void> validate(const HostConfig &cfg);

private:
	std::vector<MooncakeRequest> trace_;
	HostConfig cfg_;
	HostStats stats_;
};

}  // namespace kvfdp::workload
