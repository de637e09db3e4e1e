// `kvfdp simulate`: the CLI11 subcommand over tools/sim/simulate.hpp.
#pragma once

namespace CLI {
class App;
}

namespace kvfdp::sim {

// Adds `simulate` to app. When it runs, exit_code is set: 0 done, 1 the model or workload
// failed, 2 a bad option value (a one-line error naming the option is printed).
void add_simulate_command(CLI::App &app, int &exit_code);

} // namespace kvfdp::sim
