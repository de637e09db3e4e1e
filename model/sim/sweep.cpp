// --sweep parsing, and the sweep's table and JSON.
#include "model/sim/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/sim/parse.hpp"

namespace kvfdp::sim {
namespace {

// The swept option's bounds: (lo, hi], as --util and --op check them.
struct SweepKey {
	const char *name;
	double lo, hi;
};
constexpr SweepKey kKeys[] = {{"util", 0, 1}, {"op", 0, 10}};

Error sweep_error(std::string_view spec, const std::string &why)
{
	return guidance_error(
		std::errc::invalid_argument,
		"--sweep: '" + std::string(spec) + "' " + why +
			"; use util=START:END:STEP or op=START:END:STEP, e.g. util=0.80:1.00:0.05");
}

}  // namespace

Result<Sweep> parse_sweep(std::string_view spec)
{
	const size_t eq = spec.find('=');
	if (eq == std::string_view::npos)
		return sweep_error(spec, "has no KEY=");
	const std::string_view key = spec.substr(0, eq);
	const SweepKey *k = nullptr;
	for (const SweepKey &c : kKeys)
		k = key == c.name ? &c : k;
	if (!k)
		return sweep_error(spec, "sweeps '" + std::string(key) + "', not util or op");
	double v[3];
	std::string_view rest = spec.substr(eq + 1);
	for (int i = 0; i < 3; i++) {
		const size_t colon = rest.find(':');
		if ((i < 2) == (colon == std::string_view::npos))
			return sweep_error(spec, "is not START:END:STEP");
		const std::string_view part = rest.substr(0, colon);
		auto d = parse_number(part);
		if (!d)
			return sweep_error(spec, "has '" + std::string(part) + "', not a number");
		v[i] = *d;
		rest = colon == std::string_view::npos ? std::string_view{}
						       : rest.substr(colon + 1);
	}
	const double start = v[0], end = v[1], step = v[2];
	char bounds[96];
	std::snprintf(bounds, sizeof bounds, "goes outside %s's (%g, %g]", k->name, k->lo, k->hi);
	if (start > end)
		return sweep_error(spec, "starts above its end");
	if (step <= 0)
		return sweep_error(spec, "has a step <= 0");
	if (start <= k->lo || end > k->hi)
		return sweep_error(spec, bounds);
	// Rounding: 0.80 + 4 * 0.05 is 1.0000000000000002; the 1e-9 slack keeps END in the sweep.
	const double span = std::floor((end - start) / step + 1e-9);
	if (span + 1 > static_cast<double>(kMaxSweepPoints))
		return sweep_error(spec,
				   "has more than " + std::to_string(kMaxSweepPoints) + " points");
	Sweep s;
	s.key = k->name;
	for (int i = 0; i <= static_cast<int>(span); i++)
		s.values.push_back(std::min(k->hi, std::round((start + i * step) * 1e9) / 1e9));
	return s;
}

std::string sweep_to_table(const Sweep &s, const std::vector<SweepPoint> &points)
{
	std::string out = s.key == "util" ? "UTIL  " : "OP    ";
	char cell[64];
	if (!points.empty())
		for (const RunReport &r : points.front().runs) {
			std::snprintf(cell, sizeof cell, " %9s", r.placement.c_str());
			out += cell;
		}
	out += "\n";
	for (const SweepPoint &p : points) {
		std::snprintf(cell, sizeof cell, "%-6.3f", p.value);
		out += cell;
		for (const RunReport &r : p.runs) {
			if (r.host_bytes)
				std::snprintf(cell, sizeof cell, " %9.3f", r.waf);
			else
				std::snprintf(cell, sizeof cell, " %9s", "n/a");
			out += cell;
		}
		out += "\n";
	}
	out += "WAF per placement at each " + s.key +
	       ": the measured part of each run, after its warm-up (-o json has every run's figures)\n";
	return out;
}

nlohmann::ordered_json sweep_to_json(const Sweep &s, const std::vector<SweepPoint> &points)
{
	nlohmann::ordered_json out;
	out["sweep"] = {{"key", s.key}, {"values", s.values}};
	nlohmann::ordered_json arr = nlohmann::ordered_json::array();
	for (const SweepPoint &p : points) {
		nlohmann::ordered_json j;
		j[s.key] = p.value;
		j["runs"] = runs_to_json(p.runs)["runs"];
		arr.push_back(std::move(j));
	}
	out["points"] = std::move(arr);
	return out;
}

plot::LineChart sweep_chart(const Sweep &s, const std::vector<SweepPoint> &points,
			    const std::string &workload, std::vector<std::string> caption)
{
	plot::LineChart c;
	const bool util = s.key == "util";
	c.title = "WAF against " + std::string(util ? "utilisation" : "over-provisioning") + ": " +
		  workload;
	c.x_label = util ? "utilisation (share of the logical capacity in use)"
			 : "over-provisioning ((physical - logical) / logical)";
	c.y_label = "WAF (media bytes / host bytes)";
	c.caption = std::move(caption);
	c.y_include = true;
	c.y_include_value = 1.0;
	if (points.empty())
		return c;
	for (size_t i = 0; i < points.front().runs.size(); i++) {
		plot::Series line;
		line.name = points.front().runs[i].placement;
		for (const SweepPoint &p : points) {
			line.x.push_back(p.value);
			const bool has = i < p.runs.size() && p.runs[i].host_bytes > 0;
			line.y.push_back(has ? p.runs[i].waf : std::nan(""));
		}
		c.series.push_back(std::move(line));
	}
	return c;
}

}  // namespace kvfdp::sim
