// `kvfdp simulate`: the CLI11 subcommand over model/sim/simulate.hpp.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "model/ftl/model_config.hpp"
#include "model/sim/workload.hpp"

namespace CLI {
class App;
}

namespace kvfdp::sim {

// Where a workload is built in place of the options: a --sweep util point, an eviction order
// `kvfdp advise` tries.
struct WorkloadPoint {
	std::optional<double> util;  // replaces --util when set
	std::string evict;           // replaces --kv-evict when not empty (one of evictions())
	std::string marks;           // replaces --evict-marks when not empty (one of marks())
};

// Workloads another module adds to `simulate` (model/workload: KV mix, trace replay).
struct WorkloadFactory {
	// --workload values it builds (shown in the help and the error for unknown names).
	std::vector<std::string> names;
	// Adds its own options (e.g. --kv-trace) to the simulate subcommand; may be empty.
	std::function<void(CLI::App &sub)> add_options;
	// Builds the workload for --workload name against cfg; nullptr when name is not one of
	// its names (or its options are not set); an Error is printed and exits 2. at replaces
	// the options it sets.
	std::function<Result<std::unique_ptr<Workload>>(
		const std::string &name, const model::ModelConfig &cfg, const WorkloadPoint &at)>
		make;
	// The eviction orders the store of the workload name chooses can run (WorkloadPoint::
	// evict), {} when it has no store of its own to choose for; may be empty.
	std::function<std::vector<std::string>(const std::string &name)> evictions;
	// The evictor usage marks (HIGH,LOW percent) advise tries for the workload name
	// (WorkloadPoint::marks), {} when its store has none; may be empty.
	std::function<std::vector<std::string>(const std::string &name)> marks;
};

// Adds `simulate` to app. When it runs, exit_code is set: 0 done, 1 the model or workload
// failed, 2 a bad option value (a one-line error naming the option is printed).
void add_simulate_command(CLI::App &app, int &exit_code,
			  std::vector<WorkloadFactory> factories = {});

}  // namespace kvfdp::sim
