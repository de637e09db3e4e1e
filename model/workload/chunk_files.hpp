// What the chunk-file workloads (the Mooncake chunk store, the synthetic KV mix) share: the
// store's options and counters, its capacity on a BlockFs, and the oracle's two passes.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "model/sim/workload.hpp"
#include "model/workload/block_fs.hpp"
#include "model/workload/lifetime.hpp"
#include "model/workload/null_sink.hpp"

namespace kvfdp::workload {

struct ChunkFileConfig {
	uint64_t chunk_bytes = 64ull << 20;  // one 512-token block (after any scale factor)
	double utilisation = 0.9;            // store capacity / the device's logical capacity
};

struct ChunkFileStats {
	uint64_t chunks_written = 0;
	uint64_t bytes_written = 0;
	uint64_t bytes_deallocated = 0;
	uint64_t evictions = 0;
	uint64_t capacity_bytes = 0;
};

// The store's capacity in blocks of fs (utilisation x its blocks), after checking that
// utilisation is in (0, 1] and that largest_bytes (the biggest thing the store must hold
// at once) fits; sets st.capacity_bytes. what names that thing in the error.
[[nodiscard]] Result<uint64_t> store_blocks(const BlockFs &fs, const ChunkFileConfig &cfg,
					    uint64_t largest_bytes, const char *what,
					    ChunkFileStats &st);
// Copies fs's byte counters into st at the end of a pass.
void finish_stats(const BlockFs &fs, ChunkFileStats &st);
// The keys every chunk-file workload reports in extra().
void add_chunk_file_json(nlohmann::json &j, const ChunkFileStats &s);

// Runs pass(sink, recorder, oracle, progress) -> Result<void> for placement. For oracle
// placement a dry pass on a NullSink records every write's lifetime first, and the real
// pass gets the classes it learned (oracle is null in the dry pass, empty otherwise).
template <class Pass>
[[nodiscard]] Result<void> run_passes(sim::Placement placement, sim::BlockSink &sink,
				      sim::Progress *progress, Pass &&pass)
{
	std::vector<uint8_t> oracle;
	if (placement == sim::Placement::oracle) {
		NullSink null;
		LifetimeRecorder rec;
		KVFDP_TRY(pass(static_cast<sim::BlockSink &>(null), &rec,
			       static_cast<const std::vector<uint8_t> *>(nullptr),
			       static_cast<sim::Progress *>(nullptr)));
		oracle = rec.classify();
	}
	return pass(sink, static_cast<LifetimeRecorder *>(nullptr),
		    static_cast<const std::vector<uint8_t> *>(&oracle), progress);
}

}  // namespace kvfdp::workload
