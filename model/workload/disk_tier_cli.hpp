// `kvfdp simulate --workload kvbm` and `--workload trtllm`: the disk tiers of Dynamo KVBM and
// TensorRT-LLM (model/workload/disk_tier.hpp) with their options (--engine-*, --kvbm-*,
// --trtllm-ranks); the block size comes from simulate_factory's --kv-model and --kv-scale.
#pragma once

#include "model/sim/cmd_simulate.hpp"

namespace kvfdp::workload {

// The factory of --workload kvbm and --workload trtllm.
[[nodiscard]] sim::WorkloadFactory disk_tier_factory();

}  // namespace kvfdp::workload
