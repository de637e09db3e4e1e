// `kvfdp simulate --sweep KEY=START:END:STEP`: the swept values, and the table of a sweep.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "model/plot/line_chart.hpp"
#include "model/sim/simulate.hpp"

namespace kvfdp::sim {

// The most points one sweep runs (each point is a full simulate run per placement).
inline constexpr size_t kMaxSweepPoints = 101;

// A parsed --sweep: which option it replaces and the values it takes, start first.
struct Sweep {
	std::string key;             // "util" or "op"
	std::vector<double> values;  // start, start + step, ... up to end (inclusive, within 1e-9)
};

// Parses "util=0.80:1.00:0.05" or "op=0.05:0.28:0.01". Bounds are the options' own: util in
// (0, 1], op in (0, 10]. Fails (a guidance Error whose message names the spec) for an unknown
// key, a malformed number, start > end, step <= 0, a value out of bounds, or more than
// kMaxSweepPoints points.
[[nodiscard]] Result<Sweep> parse_sweep(std::string_view spec);

// One point of a sweep: the swept value and the runs made there, one per placement.
struct SweepPoint {
	double value = 0;
	std::vector<RunReport> runs;
};

// The sweep's table: a header "UTIL" (or "OP") then one WAF column per placement, one row per
// point ("n/a" where a run wrote nothing), then a line saying what the WAF covers.
[[nodiscard]] std::string sweep_to_table(const Sweep &s, const std::vector<SweepPoint> &points);
// {"sweep":{"key":..,"values":[..]},"points":[{"<key>":v,"runs":[runs_to_json's runs]}, ...]}
[[nodiscard]] nlohmann::ordered_json sweep_to_json(const Sweep &s,
						   const std::vector<SweepPoint> &points);

// The sweep's plot: WAF against the swept value, one series per placement (in the points'
// run order), the y axis from 1.0; caption lines under it (the run's parameters).
[[nodiscard]] plot::LineChart sweep_chart(const Sweep &s, const std::vector<SweepPoint> &points,
					  const std::string &workload,
					  std::vector<std::string> caption);

}  // namespace kvfdp::sim
