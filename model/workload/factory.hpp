// The KV workloads as a `kvfdp simulate` workload factory (model/sim/cmd_simulate.hpp).
#pragma once

#include "model/sim/cmd_simulate.hpp"

namespace kvfdp::workload {

// --workload kv, --kv-trace FILE and --blk-trace FILE, with the --kv-* options. A trace
// option takes precedence over --workload's default; it reads simulate's --util, --seed
// and --writes from the subcommand.
[[nodiscard]] sim::WorkloadFactory simulate_factory();

}  // namespace kvfdp::workload
