// The core of `kvfdp simulate`: run one workload on a fresh FDP SSD model and report WAF.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "model/ftl/model_config.hpp"
#include "model/ftl/ftl.hpp"
#include "model/sim/placer.hpp"
#include "model/sim/workload.hpp"

namespace kvfdp::sim {

// What one run measured, from the workload's begin_measurement() (or the start) to the end.
struct RunReport {
	std::string placement;  // "none", "hint", "writer", "learned", "oracle"
	std::string workload;
	uint64_t host_bytes = 0;   // delta HBMW
	uint64_t media_bytes = 0;  // delta MBMW
	double waf = 0;            // media_bytes / host_bytes (0 and "n/a" when host_bytes is 0)
	uint64_t gc_runs = 0;      // RUs reclaimed by GC
	uint64_t relocated_bytes = 0;
	uint64_t erased_bytes = 0;                        // delta MBE
	model::Stats total;                               // the whole run, warm-up included
	double seconds = 0;                               // wall time of the run
	nlohmann::json extra = nlohmann::json::object();  // Workload::extra()
};

[[nodiscard]] const char *placement_name(Placement p);
[[nodiscard]] std::optional<Placement> parse_placement(std::string_view s);
// The placements simulate runs for w with --placement all: its own (none, hint, oracle) with
// writer and learned after hint where it supports hint: none, hint, writer, learned, oracle.
[[nodiscard]] std::vector<Placement> runnable_placements(const Workload &w);

// placement::default_handle: the one class -> handle map (placement/handle_map.hpp).
[[nodiscard]] uint32_t default_handle_for_class(uint8_t rw_class, uint32_t nhandles);

// Builds a model from cfg, replays workload into it and reports the figures. Placement
// (model/sim/placer.hpp): none puts every write on handle 0; hint and oracle map classes
// through default_handle_for_class over the handles of reclaim group 0 (cfg.nruh); writer
// gives each writer its own handle; learned runs the placement learner, set up by learner.
// Fails on an invalid config, a workload error, or a model error (e.g. out of space).
[[nodiscard]] Result<RunReport> run_one(const model::ModelConfig &cfg, Workload &workload,
					Placement placement, Progress *progress,
					const PlacerOptions &learner = {});

// {"runs":[{"placement":..,"host_bytes":..,"media_bytes":..,"waf":..,"gc_runs":..,
//  "relocated_bytes":.., then extra keys}, ...]} with keys in that order.
[[nodiscard]] nlohmann::ordered_json runs_to_json(const std::vector<RunReport> &runs);
// "512 B", "1.50 MiB", ... (binary units, two decimals).
[[nodiscard]] std::string iec(uint64_t bytes);
// The table `kvfdp simulate` prints: placement, host bytes, media bytes, WAF, GC runs,
// relocated bytes, then a line saying they cover the measured part of each run.
[[nodiscard]] std::string runs_to_table(const std::vector<RunReport> &runs);

}  // namespace kvfdp::sim
