// The contract between workloads and `kvfdp simulate`: a workload emits block operations
// with a lifetime class; simulate maps classes to placement handles and feeds a model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"

namespace kvfdp::sim {

// How a workload assigns lifetime classes (RWH values 0..5) to what it writes.
enum class Placement : uint8_t {
	none,   // everything on the default class
	hint,   // what an application can know at write time
	oracle, // from the actual time of death (an upper bound)
};

// Receives a workload's operations in logical blocks of the model's LBA size.
class BlockSink {
public:
	virtual ~BlockSink() = default;
	virtual void write(uint64_t slba, uint64_t nlb, uint8_t rw_class) = 0;
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
[[nodiscard]] inline std::vector<Placement> all_placements()
{
	return {Placement::none, Placement::hint, Placement::oracle};
}

class Workload {
public:
	virtual ~Workload() = default;
	[[nodiscard]] virtual std::string name() const = 0;
	// Replays the whole workload once into sink, classifying by placement.
	// logical_lbas is the capacity the sink addresses.
	[[nodiscard]] virtual Result<void> run(Placement placement, uint64_t logical_lbas,
					       uint32_t lba_size, BlockSink &sink, Progress *progress) = 0;
	// The placements this workload can classify by, in the order `--placement all` runs them.
	[[nodiscard]] virtual std::vector<Placement> placements() const
	{
		return {Placement::none, Placement::hint};
	}
	// Extra per-run figures for the report (e.g. hit_ratio, evictions), as a JSON object.
	[[nodiscard]] virtual nlohmann::json extra() const { return nlohmann::json::object(); }
};

} // namespace kvfdp::sim
