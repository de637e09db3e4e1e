// `kvfdp advise`: the CLI11 subcommand over tools/sim/advise.hpp, fed from a recorded trace
// or any workload `kvfdp simulate` accepts.
#pragma once

#include <vector>

#include "tools/sim/simulate_cmd.hpp"

namespace CLI {
class App;
}

namespace kvfdp::sim {

// Adds `advise` to app. When it runs, exit_code is set: 0 a recommendation, 1 no setting
// meets the target (one line says so, with the best found) or a run failed, 2 a bad option
// value (one line naming it).
void add_advise_command(CLI::App &app, int &exit_code, std::vector<WorkloadFactory> factories = {});

} // namespace kvfdp::sim
