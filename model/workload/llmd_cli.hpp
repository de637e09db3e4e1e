// `kvfdp simulate --workload llmd` and `kvfdp advise --workload llmd`: the workload factory
// with its options (--evict-marks, --evict-order, --evict-recent); the trace and block size
// come from simulate_factory's --kv-trace, --kv-model, --kv-scale and --kv-requests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/sim/cmd_simulate.hpp"

namespace kvfdp::workload {

// The --workload value.
inline constexpr std::string_view kLlmdWorkload = "llmd";

// --workload llmd: a --kv-trace replayed through vLLM's file tier under llm-d's evictor. Put
// it before simulate_factory(), whose --kv-trace would otherwise claim the run.
[[nodiscard]] sim::WorkloadFactory llmd_factory();

// The marks `kvfdp advise` tries for --workload llmd unless --evict-marks names one, highest
// first (HIGH,LOW percent).
[[nodiscard]] const std::vector<std::string> &llmd_advise_marks();

// The option that names a workload's eviction order: --evict-order for llmd, else --kv-evict.
[[nodiscard]] const char *evict_option_for(std::string_view workload);

}  // namespace kvfdp::workload
