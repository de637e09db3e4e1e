// The contract between workloads and `kvfdp simulate`: a workload emits block operations
// with a lifetime class and a writer; simulate maps them to placement handles and feeds a
// model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"

namespace kvfdp::sim {

// How writes are placed. A workload classifies its writes for none, hint and oracle; writer
// and learned take the hint classes (and the writers) and place them in the sink.
enum class Placement : uint8_t {
	none,     // everything on the default class
	hint,     // what an application can know at write time, through the default class map
	oracle,   // from the actual time of death (an upper bound)
	writer,   // one handle per writer, in order of first write, up to the handles there are
	learned,  // the placement learner (placement/learner.hpp) keyed by (writer, hint class)
};

// Receives a workload's operations in logical blocks of the model's LBA size.
class BlockSink {
public:
	virtual ~BlockSink() = default;
	// writer: an opaque id of who wrote (an engine, a log writer, ...; 0 when unknown).
	virtual void write(uint64_t slba, uint64_t nlb, uint8_t rw_class, uint64_t writer) = 0;
	virtual void deallocate(uint64_t slba, uint64_t nlb) = 0;
	// Marks the end of warm-up: the run's reported figures count from here (from the start
	// when never called). A workload calls it at most once per run.
	virtual void begin_measurement() {}
};

// Progress reporting for long runs (a bar on a TTY); fraction in [0, 1].
class Progress {
public:
	virtual ~Progress() = default;
	virtual void update(double fraction) = 0;
};

// none, hint and oracle: for a workload that can also classify by the actual time of death.
// (simulate adds writer and learned wherever hint is supported.)
[[nodiscard]] inline std::vector<Placement> all_placements()
{
	return {Placement::none, Placement::hint, Placement::oracle};
}

class Workload {
public:
	virtual ~Workload() = default;
	[[nodiscard]] virtual std::string name() const = 0;
	// Replays the whole workload once into sink, classifying by placement (none, hint or
	// oracle: simulate passes hint for writer and learned).
	// logical_lbas is the capacity the sink addresses.
	[[nodiscard]] virtual Result<void> run(Placement placement, uint64_t logical_lbas,
					       uint32_t lba_size, BlockSink &sink,
					       Progress *progress) = 0;
	// The placements this workload can classify by, in the order `--placement all` runs them:
	// by default none, hint and oracle (every workload that replays files or slots).
	[[nodiscard]] virtual std::vector<Placement> placements() const { return all_placements(); }
	// Extra per-run figures for the report (e.g. hit_ratio, evictions), as a JSON object.
	[[nodiscard]] virtual nlohmann::json extra() const { return nlohmann::json::object(); }
};

}  // namespace kvfdp::sim
