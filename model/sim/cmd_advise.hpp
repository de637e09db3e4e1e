// `kvfdp advise`: the CLI11 subcommand over model/sim/advise.hpp, fed from a recorded trace
// or any workload `kvfdp simulate` accepts.
#pragma once

#include <functional>
#include <vector>

#include "common/result.hpp"
#include "proto/twin_window.hpp"
#include "model/sim/cmd_simulate.hpp"

namespace CLI {
class App;
}

namespace kvfdp::sim {

// How advise reaches a running kvfdpd (cli/ gives its control client; kvfdp_sim links
// none): whether the global --socket was given (advise then asks the twin, as --twin does),
// and the twin_window request. A failed fetch's Error carries ENODEV when kvfdpd is not
// there (exit 3), and its message is the one line to print.
struct TwinWindowClient {
	std::function<bool()> socket_given;
	std::function<Result<proto::TwinWindow>()> fetch;
};

// Adds `advise` to app. When it runs, exit_code is set: 0 a recommendation, 1 no setting
// meets the target (one line says so, with the best found) or a run failed, 2 a bad option
// value (one line naming it), 3 kvfdpd unreachable (--twin).
void add_advise_command(CLI::App &app, int &exit_code, std::vector<WorkloadFactory> factories = {},
			TwinWindowClient twin = {});

}  // namespace kvfdp::sim
