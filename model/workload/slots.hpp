// A slot store (`--workload slots`): KV tiers that rewrite fixed slots on a raw device
// instead of unlinking files (LMCache raw_block, Dynamo KVBM's preallocated files, vLLM's
// preallocated disk file). Each worker owns a window of fixed-size slots; a new object
// overwrites the slot its window reuses next: in write order (touches 0), or the least
// recently used slot, where touches (prefetch reads, hits) move a uniformly chosen object
// to the most recently used end. Workers write at their byte rates, interleaved; each is a
// writer id (1..N) and a hint class (its bucket). The defaults model LMCache raw_block's
// 9-worker benchmark (docs/RESULTS.md "Slot store").
//
// The rebuild of issue 36 (docs/RESULTS.md "Slot engines"): workers of one workload type share
// a writer id (SlotWorker::writer), the whole namespace is first filled sequentially by a
// writer of its own (SlotConfig::fill_writer), and a static tail after the windows is written
// once and never dies (SlotConfig::static_tail).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "model/sim/workload.hpp"

namespace kvfdp::workload {

struct SlotWorker {
	std::string name;
	uint64_t object_bytes = 0;  // unscaled; the --kv-scale factor applies
	double rate = 1;            // relative byte rate
	double window =
		0;  // share of the logical capacity its slots take (0: its weight's part of --util)
	double weight = 1;    // relative window size where window is 0: --util split in proportion
	double touches = 0;   // LRU touches per object written; 0 = reuse in write order
	uint8_t cls = 0;      // hint class (its bucket)
	uint64_t writer = 0;  // writer id; 0: its position + 1
};

struct SlotConfig {
	std::vector<SlotWorker> workers;  // empty: default_workers()
	double scale = 1.0 / 256;         // object size factor (--kv-scale)
	double utilisation = 0.89;  // default windows: this share of the capacity, split by weight
	double warmup_writes = 1;   // capacities written after the fill before measuring
	double measure_writes = 3;  // capacities measured
	uint64_t seed = 1;
	// Before any worker writes, one writer of its own (the largest worker id + 1, no hint)
	// writes every slot and the static tail once, in LBA order; otherwise each worker fills
	// its own window at its rate.
	bool fill_writer = false;
	// Share of the capacity after the windows written once at the start (by the fill writer,
	// or first by that writer id alone) and never again: data that never dies.
	double static_tail = 0;
};

// LMCache raw_block's benchmark (PR #4016: nine workers spanning 855 GiB of 960 GiB): 2 chat
// (4 MiB, SHORT, 1 touch per write, 90 GiB each), 1 long-context (32 MiB, LONG, 0.5, 180 GiB),
// 2 RAG (16 MiB, MEDIUM, 2: prefetch reads, 90 GiB each), 3 random-prompt (2 MiB, NOT_SET, 0:
// never reused, 90 GiB each), 1 metadata (1 MiB, EXTREME, 1, 45 GiB); equal byte rates. The
// window weights 2, 2, 4, 2, 2, 2, 2, 2, 1 are those sizes.
[[nodiscard]] std::vector<SlotWorker> default_slot_workers();

struct SlotStats {
	struct Worker {
		uint64_t slots = 0, object_bytes = 0, objects = 0, bytes = 0, touches = 0;
	};
	std::vector<Worker> workers;
	uint64_t fill_bytes = 0;
	uint64_t static_bytes = 0;  // the static tail
	uint64_t fill_writer = 0;   // the id of the fill and the static tail (0: none)
};

class SlotWorkload : public sim::Workload {
public:
	explicit SlotWorkload(SlotConfig cfg);

	[[nodiscard]] std::string name() const override { return "slots"; }
	[[nodiscard]] Result<void> run(sim::Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, sim::BlockSink &sink,
				       sim::Progress *progress) override;
	[[nodiscard]] nlohmann::json extra() const override;

	// Checks the workers against a capacity (bytes): every window holds at least two of its
	// objects, the windows and the static tail fit; the error names the option and worker.
	[[nodiscard]] static Result<void> validate(const SlotConfig &cfg, uint64_t capacity_bytes);

private:
	SlotConfig cfg_;
	SlotStats stats_;
};

}  // namespace kvfdp::workload
