// A synthetic KV-cache workload with the three lifetime populations of KV caches: shared
// prefixes (hours to days), conversation context (minutes) and single-query KV (seconds).
// Sessions arrive as a Poisson process; each writes 1..max chunk files that all die
// together after an exponential lifetime. The store is kept at the target utilisation.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "model/sim/workload.hpp"
#include "model/workload/chunk_files.hpp"

namespace kvfdp::workload {

enum KvPopulation : uint8_t { kPrefix = 0, kConversation = 1, kSingleQuery = 2, kPopulations = 3 };

struct KvSynthConfig : ChunkFileConfig {
	// Share of written bytes per population (normalised; need not sum to 1).
	std::array<double, kPopulations> mix{0.05, 0.35, 0.60};
	// Mean lifetime per population in seconds (exponentially distributed).
	std::array<double, kPopulations> mean_life_s{12 * 3600.0, 300.0, 10.0};
	// Chunks per session, uniform in [1, max].
	std::array<uint32_t, kPopulations> max_chunks{8, 16, 8};
	// (utilisation: the live data the store settles at.)
	// Total bytes to write, in multiples of the logical capacity.
	double drive_writes = 3.0;
	uint64_t seed = 1;
};

// evictions: sessions evicted early because the store was full.
struct KvSynthStats : ChunkFileStats {
	std::array<uint64_t, kPopulations> sessions{};
	std::array<uint64_t, kPopulations> bytes{};
	uint64_t expired = 0;  // sessions that died at their lifetime
	double sim_seconds = 0;
};

class KvSynthWorkload : public sim::Workload {
public:
	explicit KvSynthWorkload(KvSynthConfig cfg);

	[[nodiscard]] std::string name() const override { return "kv"; }
	[[nodiscard]] Result<void> run(sim::Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, sim::BlockSink &sink,
				       sim::Progress *progress) override;
	[[nodiscard]] nlohmann::json extra() const override;
	[[nodiscard]] const KvSynthStats &stats() const { return stats_; }

private:
	KvSynthConfig cfg_;
	KvSynthStats stats_;
};

}  // namespace kvfdp::workload
