// `kvfdp advise`: for a WAF target, the utilisation, placement and (for a chunk store) the
// eviction order, or (for an evictor with usage marks, --workload llmd) the marks and order,
// to run, chosen from a sweep of the FDP SSD model over a source's workload.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "model/sim/simulate.hpp"
#include "model/sim/sweep.hpp"

namespace kvfdp::sim {

// The WAF advise aims at unless --target says otherwise.
inline constexpr double kDefaultAdviseTarget = 1.05;
// The utilisations advise tries unless --sweep says otherwise.
inline constexpr std::string_view kDefaultAdviseSweep = "util=0.50:1.00:0.05";

// One setting advise runs: the utilisation, the placement, the store's eviction order ("" when
// the source has no store to choose for) and its evictor's usage marks ("HIGH,LOW" percent,
// "" when it has none).
struct AdviseSetting {
	double util = 1;
	Placement placement = Placement::none;
	std::string evict;
	std::string marks;
};

// Where advise's runs come from. TraceSource (cmd_advise.cpp) replays a recorded trace or any
// workload `kvfdp simulate` accepts; a running daemon's twin window can be another source.
class AdviseSource {
public:
	virtual ~AdviseSource() = default;
	// The workload's name, for the report.
	[[nodiscard]] virtual std::string name() const = 0;
	// The placements its workload can run, in simulate's order (advise leaves out oracle).
	[[nodiscard]] virtual std::vector<Placement> placements() const = 0;
	// The eviction orders its store can run, {} when it has none to choose.
	[[nodiscard]] virtual std::vector<std::string> evictions() const = 0;
	// The evictor usage marks its store can run ("HIGH,LOW" percent, the highest first), {}
	// when it has none.
	[[nodiscard]] virtual std::vector<std::string> marks() const { return {}; }
	// One run of the workload on a fresh model at s.
	[[nodiscard]] virtual Result<RunReport> run(const AdviseSetting &s) = 0;
	// The `kvfdp simulate` command that makes the same run as s, "" when there is none.
	[[nodiscard]] virtual std::string simulate_command(const AdviseSetting &s) const
	{
		(void)s;
		return {};
	}
	// What the utilisation means for this source when it is not the workload's own --util
	// (a line under the table), "" when it is.
	[[nodiscard]] virtual std::string util_note() const { return {}; }
};

// What to ask the source.
struct AdviseOptions {
	double target = kDefaultAdviseTarget;
	Sweep sweep;                         // key "util"
	std::vector<Placement> placements;   // {}: the source's, oracle left out
	std::vector<std::string> evictions;  // {}: the source's
	std::vector<std::string> marks;      // {}: the source's
};

// One run of the sweep.
struct AdviseCell {
	AdviseSetting setting;
	RunReport run;
};

// The sweep behind a recommendation and the choice made from it.
struct Advice {
	double target = kDefaultAdviseTarget;
	std::string workload;
	Sweep sweep;
	std::vector<Placement> placements;
	std::vector<std::string> evictions;  // {""} when the source has no store to choose for
	std::vector<std::string> marks;      // {""} when the source has no marks to choose
	std::vector<AdviseCell> cells;       // eviction-major, then marks, utilisation, placement
	std::optional<size_t> pick;  // the recommendation; nullopt when no cell meets the target
	size_t best = 0;             // the lowest WAF found (the highest utilisation of equals)
	std::string check;           // the source's simulate command at pick, "" when none
	std::string util_note;       // AdviseSource::util_note
};

// Parses --target: a number >= 1.0. Fails (a guidance Error naming --target) for anything
// else; below 1.0 the message says why no setting can meet it.
[[nodiscard]] Result<double> parse_advise_target(std::string_view s);
// parse_sweep, refused unless it sweeps util (the message names the spec).
[[nodiscard]] Result<Sweep> parse_advise_sweep(std::string_view spec);

// Runs src at every setting of o and chooses. The recommendation is the highest utilisation
// at which some placement (and eviction, and marks) meets WAF <= target; at that utilisation
// the highest hit ratio, then the lowest WAF, then the earlier placement (none, hint, writer,
// learned), eviction and marks win. Fails on the first run that fails.
[[nodiscard]] Result<Advice> advise(AdviseSource &src, const AdviseOptions &o);

// The store's hit ratio of a run (RunReport::extra "hit_ratio"), nullopt for no store.
[[nodiscard]] std::optional<double> run_hit_ratio(const RunReport &r);

// The table: one row per eviction and utilisation, a WAF column per placement (the
// recommendation marked *), HIT where the store has a hit ratio; then the recommendation
// (or the one line saying no setting meets the target, with the best found).
[[nodiscard]] std::string advice_to_table(const Advice &a);
// {"target","workload","sweep","placements","evictions","runs":[..],"recommendation":{..}|null,
//  "best":{..}}; a run or choice carries util, placement, evict, waf, host/media bytes,
// hit_ratio.
[[nodiscard]] nlohmann::ordered_json advice_to_json(const Advice &a);
// The one line for no recommendation: "no setting meets WAF <= T ...; the best found is ...".
[[nodiscard]] std::string no_setting_line(const Advice &a);
// Where the marks were swept: for each eviction order none of whose marks meets the target,
// one line "eviction E: no marks meet WAF <= T ...; the best is ..."; "" otherwise.
[[nodiscard]] std::string no_marks_lines(const Advice &a);
// A sweep value as a command line reads it back (--util, --sweep): %.9f trimmed (sweep values
// are rounded to 1e-9, so this parses to the same double).
[[nodiscard]] std::string util_word(double u);

}  // namespace kvfdp::sim
