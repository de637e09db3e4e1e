// `kvfdp simulate`: options, validation (exit 2 with a one-line error), runs, table / JSON.
#include "tools/sim/simulate_cmd.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "tools/plot/line_chart.hpp"
#include "tools/sim/parse.hpp"
#include "tools/sim/simulate.hpp"
#include "tools/sim/sweep.hpp"
#include "tools/sim/synthetic.hpp"
#include "tools/workload/factory.hpp"

namespace kvfdp::sim {
namespace {

constexpr int kExitOk = 0, kExitError = 1, kExitUsage = 2;

// Option values as typed; parsed in the callback so every error names its option.
struct Args {
	std::string workload = "uniform";
	std::string capacity = "4GiB";
	std::string op = "0.28";
	std::string ru_size = "1MiB";
	std::string handles = "8";
	std::string util = "1";
	std::string placement = "all";
	std::string output = "table";
	std::string gc = "greedy";
	std::string mapping_unit = "4KiB";
	std::string lba_size = "4096";
	std::string seed = "1";
	std::string writes = "3";
	std::string ruh_types = "initially";
	std::string sweep;  // --sweep KEY=START:END:STEP, "" for one run
	std::string plot;   // --plot FILE.svg
	bool ruh = false;
	bool util_given = false, op_given = false;
};

// The model's placement handles at the end of a run (RunReport::extra["ruhss"]), laid out
// like `kvfdp ruh`: what was placed there (classes, writers wN, learned keys wN:class),
// RUAMW, host bytes per handle.
std::string handles_table(const RunReport &r, uint32_t lba_size)
{
	std::string out = "placement handles after the " + r.placement +
			  " run (HOST BYTES: the whole run, warm-up included)\n";
	char line[160];
	std::snprintf(line, sizeof line, "%4s %4s %6s %-14s %12s %12s %14s\n", "IDX", "RG", "RUHID",
		      "PLACED", "RUAMW_LBAS", "RUAMW", "HOST BYTES");
	out += line;
	if (!r.extra.is_object() || !r.extra.contains("ruhss"))
		return out;
	const auto &hs = r.extra["ruhss"];
	for (const auto &h : hs) {
		const auto ruhid = h.value("ruhid", uint64_t{0});
		const auto ruamw = h.value("ruamw", uint64_t{0});
		const auto bytes = h.value("host_bytes", uint64_t{0});
		// What the run placed there (tools/sim/placer.hpp): classes, writers or learned keys.
		std::string cls = h.value("placed", std::string("-"));
		if (cls.size() > 40)
			cls = cls.substr(0, 37) + "...";
		std::snprintf(line, sizeof line, "%4llu %4llu %6llu %-14s %12llu %12s %14s\n",
			      static_cast<unsigned long long>(h.value("index", uint64_t{0})),
			      static_cast<unsigned long long>(h.value("rg", uint64_t{0})),
			      static_cast<unsigned long long>(ruhid), cls.c_str(),
			      static_cast<unsigned long long>(ruamw), iec(ruamw * lba_size).c_str(),
			      iec(bytes).c_str());
		out += line;
	}
	return out;
}

// A bar on stderr: "simulate uniform/none [#######.............]  35%".
class TtyProgress final : public Progress {
public:
	explicit TtyProgress(std::string label) : label_(std::move(label)) {}
	~TtyProgress() override
	{
		if (shown_ >= 0)
			std::fprintf(stderr, "\r%*s\r", static_cast<int>(label_.size()) + 40, "");
	}
	void update(double f) override
	{
		const int pct = f <= 0 ? 0 : f >= 1 ? 100 : static_cast<int>(f * 100);
		if (pct == shown_)
			return;
		shown_ = pct;
		char bar[31];
		const int fill = pct * 30 / 100;
		for (int i = 0; i < 30; i++)
			bar[i] = i < fill ? '#' : '.';
		bar[30] = 0;
		std::fprintf(stderr, "\r%s [%s] %3d%%", label_.c_str(), bar, pct);
		std::fflush(stderr);
	}

private:
	std::string label_;
	int shown_ = -1;
};

struct UsageError {
	std::string msg;
};

uint64_t size_arg(const char *name, const std::string &v, std::string *err)
{
	auto s = parse_size(v);
	if (!s)
		*err = std::string(name) + ": '" + v + "' is not a size; use e.g. 4096, 64KiB, 1GiB, 2TiB";
	return s.value_or(0);
}

double number_arg(const char *name, const std::string &v, double lo, double hi, bool lo_open,
		  std::string *err)
{
	auto d = parse_number(v);
	if (!d || (lo_open ? *d <= lo : *d < lo) || *d > hi) {
		char buf[160];
		std::snprintf(buf, sizeof buf, "%s: '%s' must be a number in %c%g, %g]", name, v.c_str(),
			      lo_open ? '(' : '[', lo, hi);
		*err = buf;
		return 0;
	}
	return *d;
}

// --ruh-types: one type for every handle, or a comma list of one per handle; sets
// cfg.ruh_types (cfg.nruh already set). Returns the error line, or "".
std::string ruh_types_arg(const std::string &v, model::ModelConfig &cfg)
{
	std::vector<model::HandleType> types;
	size_t pos = 0;
	for (;;) {
		const size_t comma = v.find(',', pos);
		const std::string t = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		if (t == "initially")
			types.push_back(model::HandleType::initially_isolated);
		else if (t == "persistently")
			types.push_back(model::HandleType::persistently_isolated);
		else
			return "--ruh-types: '" + t + "' is not a handle type; use initially or persistently";
		if (comma == std::string::npos)
			break;
		pos = comma + 1;
	}
	if (types.size() == 1)
		types.assign(cfg.nruh, types.front());
	if (types.size() != cfg.nruh)
		return "--ruh-types: " + std::to_string(types.size()) + " types for " + std::to_string(cfg.nruh) +
		       " handles; give one type, or one per handle";
	cfg.ruh_types = std::move(types);
	return "";
}

// The parsed numbers a workload takes from simulate's own options.
struct Knobs {
	double util = 1, writes = 3;
	uint64_t seed = 1;
};

// The workload --workload names (a factory's, or uniform / hotcold), at util_override in
// place of --util when set (a --sweep util point). nullptr and *errp set when it cannot be made.
std::unique_ptr<Workload> make_workload(const Args &a, const std::vector<WorkloadFactory> &factories,
					const model::ModelConfig &cfg, const Knobs &k,
					std::optional<double> util_override, std::string *errp)
{
	std::unique_ptr<Workload> workload;
	std::string &err = *errp;
	// Factories first: their options (e.g. --kv-trace) claim the run even when --workload
	// is left at its default.
	for (const WorkloadFactory &f : factories) {
		if (!err.empty() || workload || !f.make)
			break;
		auto w = f.make(a.workload, cfg, util_override);
		if (!w)
			err = w.error().message();
		else
			workload = std::move(*w);
	}
	if (err.empty() && !workload) {
		if (a.workload == "uniform") {
			UniformOptions o;
			o.util = util_override.value_or(k.util);
			o.measure_writes = k.writes;
			o.write_bytes = cfg.mapping_unit;
			o.seed = k.seed;
			workload = std::make_unique<UniformWorkload>(o);
		} else if (a.workload == "hotcold") {
			HotColdOptions o;
			o.util = util_override.value_or(k.util);
			o.measure_lifetimes = k.writes;
			o.write_bytes = cfg.mapping_unit;
			o.seed = k.seed;
			workload = std::make_unique<HotColdWorkload>(o);
		} else {
			{
				std::string names = "uniform, hotcold";
				for (const WorkloadFactory &f : factories)
					for (const std::string &n : f.names)
						names += ", " + n;
				err = "--workload: '" + a.workload + "' is not a workload; use one of " + names;
			}
		}
	}
	if (!err.empty())
		workload.reset();
	return workload;
}

// --placement: all (what w supports), or one placement or a comma list of them.
std::vector<Placement> placements_arg(const std::string &arg, const Workload &w, std::string *err)
{
	const std::vector<Placement> supported = runnable_placements(w);
	if (arg == "all")
		return supported;
	std::vector<Placement> placements;
	size_t pos = 0;
	for (;;) {
		const size_t comma = arg.find(',', pos);
		const std::string one = arg.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		auto p = parse_placement(one);
		if (!p) {
			*err = "--placement: '" + one + "' must be none, hint, writer, learned, oracle or all (or a comma list)";
			return {};
		}
		bool ok = false;
		for (Placement s : supported)
			ok = ok || s == *p;
		if (!ok) {
			std::string names;
			for (Placement s : supported)
				names += std::string(names.empty() ? "" : ", ") + placement_name(s);
			*err = "--placement: workload " + w.name() + " supports " + names + " (or all)";
			return {};
		}
		placements.push_back(*p);
		if (comma == std::string::npos)
			return placements;
		pos = comma + 1;
	}
}

// --sweep: the parsed spec, refused where it cannot run: with the option it sweeps also
// given, with --ruh, or (op) a point the model refuses. Returns the error line, or "".
std::string sweep_arg(const Args &a, const model::ModelConfig &cfg, std::optional<Sweep> *out)
{
	auto s = parse_sweep(a.sweep);
	if (!s)
		return s.error().message();
	if ((s->key == "util" && a.util_given) || (s->key == "op" && a.op_given))
		return "--sweep: '" + a.sweep + "' sets --" + s->key + " at each point; drop --" + s->key;
	if (a.ruh)
		return "--sweep: '" + a.sweep + "' prints WAF only; --ruh needs a single run";
	if (s->key == "op")
		for (double v : s->values) {
			model::ModelConfig c = cfg;
			c.op = v;
			auto ok = model::validate(c);
			if (!ok) {
				char at[32];
				std::snprintf(at, sizeof at, "%g", v);
				return "--sweep: '" + a.sweep + "' at op " + at + ": model: " + ok.error().message();
			}
		}
	*out = std::move(*s);
	return "";
}

// The caption under a sweep's plot: the run's parameters, the swept one left out.
std::vector<std::string> sweep_caption(const Args &a, const Workload &w, const Sweep &s)
{
	std::string line = "workload " + w.name() + ", capacity " + a.capacity;
	line += s.key == "op" ? ", util " + a.util : ", OP " + a.op;
	line += ", RU size " + a.ru_size + ", " + a.handles + " handles, GC " + a.gc + ", seed " + a.seed;
	return {line, "kvfdp simulate --sweep " + a.sweep + " (WAF of the measured part of each run)"};
}

// Runs every placement at each point of s (cfg.op or the workload's util set to the point),
// prints the sweep's table (or JSON), then writes --plot. Returns kExitOk / kExitError /
// kExitUsage (a point the workload refuses).
int run_sweep(const Args &a, const std::vector<WorkloadFactory> &factories, const model::ModelConfig &base,
	      const Knobs &k, const Sweep &s, const std::vector<Placement> &placements)
{
	const bool tty = isatty(STDERR_FILENO) == 1;
	std::vector<SweepPoint> points;
	std::string name;
	std::vector<std::string> caption;
	for (double v : s.values) {
		model::ModelConfig cfg = base;
		if (s.key == "op")
			cfg.op = v;
		std::string err;
		auto w = make_workload(a, factories, cfg, k, s.key == "util" ? std::optional<double>(v) : std::nullopt, &err);
		if (!w) {
			std::fprintf(stderr, "kvfdp simulate: --sweep %s at %s %g: %s\n", a.sweep.c_str(), s.key.c_str(), v,
				     err.c_str());
			return kExitUsage;
		}
		if (caption.empty()) {
			name = w->name();
			caption = sweep_caption(a, *w, s);
		}
		SweepPoint pt{v, {}};
		for (Placement p : placements) {
			std::unique_ptr<TtyProgress> bar;
			char label[160];
			std::snprintf(label, sizeof label, "simulate %s/%s %s=%g", name.c_str(), placement_name(p),
				      s.key.c_str(), v);
			if (tty)
				bar = std::make_unique<TtyProgress>(label);
			auto r = run_one(cfg, *w, p, bar.get());
			bar.reset();
			if (!r) {
				std::fprintf(stderr, "kvfdp simulate: %s=%g: %s\n", s.key.c_str(), v,
					     r.error().message().c_str());
				return kExitError;
			}
			pt.runs.push_back(std::move(*r));
		}
		points.push_back(std::move(pt));
	}
	if (a.output == "json")
		std::printf("%s\n", sweep_to_json(s, points).dump().c_str());
	else
		std::fputs(sweep_to_table(s, points).c_str(), stdout);
	std::fflush(stdout);
	if (a.plot.empty())
		return kExitOk;
	auto wrote = plot::write_text_file(a.plot, plot::render_svg(sweep_chart(s, points, name, std::move(caption))));
	if (!wrote) {
		std::fprintf(stderr, "kvfdp simulate: --plot: %s (the table above is complete)\n",
			     wrote.error().message().c_str());
		return kExitError;
	}
	return kExitOk;
}

// Returns kExitOk / kExitError / kExitUsage.
int run_simulate(const Args &a, const std::vector<WorkloadFactory> &factories)
{
	std::string err;
	model::ModelConfig cfg;
	cfg.logical_bytes = size_arg("--capacity", a.capacity, &err);
	if (err.empty())
		cfg.ru_size = size_arg("--ru-size", a.ru_size, &err);
	if (err.empty())
		cfg.mapping_unit = static_cast<uint32_t>(size_arg("--mapping-unit", a.mapping_unit, &err));
	if (err.empty()) {
		auto lba = parse_uint(a.lba_size);
		if (!lba || (*lba != 512 && *lba != 4096))
			err = "--lba-size: '" + a.lba_size + "' must be 512 or 4096";
		else
			cfg.lba_size = static_cast<uint32_t>(*lba);
	}
	if (err.empty())
		cfg.op = number_arg("--op", a.op, 0, 10, true, &err);
	const double util = err.empty() ? number_arg("--util", a.util, 0, 1, true, &err) : 0;
	const double writes = err.empty() ? number_arg("--writes", a.writes, 0, 1000, true, &err) : 0;
	if (err.empty()) {
		auto h = parse_uint(a.handles);
		if (!h || *h < 1 || *h > 128)
			err = "--handles: '" + a.handles + "' must be an integer from 1 to 128";
		else
			cfg.nruh = static_cast<uint16_t>(*h);
	}
	uint64_t seed = 1;
	if (err.empty()) {
		auto s = parse_uint(a.seed);
		if (!s)
			err = "--seed: '" + a.seed + "' must be a non-negative integer";
		else
			seed = *s;
	}
	if (err.empty()) {
		auto g = model::parse_gc_policy(a.gc);
		if (!g)
			err = "--gc: " + g.error().message();
		else
			cfg.gc = *g;
	}
	if (err.empty())
		err = ruh_types_arg(a.ruh_types, cfg);
	if (err.empty() && a.output != "table" && a.output != "json")
		err = "-o/--output: '" + a.output + "' must be table or json";
	if (err.empty()) {
		auto v = model::validate(cfg);
		if (!v)
			err = "model: " + v.error().message() + " (see --capacity, --op, --ru-size, --handles)";
	}

	std::optional<Sweep> sweep;
	if (err.empty() && !a.sweep.empty())
		err = sweep_arg(a, cfg, &sweep);
	if (err.empty() && !a.plot.empty() && !sweep)
		err = "--plot: draws a sweep; add --sweep util=START:END:STEP (or op=START:END:STEP)";
	std::unique_ptr<Workload> workload;
	if (err.empty())
		workload = make_workload(a, factories, cfg, Knobs{util, writes, seed}, std::nullopt, &err);
	std::vector<Placement> placements;
	if (err.empty())
		placements = placements_arg(a.placement, *workload, &err);
	if (!err.empty()) {
		std::fprintf(stderr, "kvfdp simulate: %s\n", err.c_str());
		return kExitUsage;
	}
	if (sweep)
		return run_sweep(a, factories, cfg, Knobs{util, writes, seed}, *sweep, placements);

	const bool tty = isatty(STDERR_FILENO) == 1;
	std::vector<RunReport> runs;
	for (Placement p : placements) {
		std::unique_ptr<TtyProgress> bar;
		if (tty)
			bar = std::make_unique<TtyProgress>("simulate " + workload->name() + "/" +
							    placement_name(p));
		auto r = run_one(cfg, *workload, p, bar.get());
		bar.reset();
		if (!r) {
			std::fprintf(stderr, "kvfdp simulate: %s\n", r.error().message().c_str());
			return kExitError;
		}
		runs.push_back(std::move(*r));
	}
	if (a.output == "json")
		std::printf("%s\n", runs_to_json(runs).dump().c_str());
	else
		std::fputs(runs_to_table(runs).c_str(), stdout);
	if (a.ruh && a.output != "json")
		for (const RunReport &r : runs)
			std::fputs(("\n" + handles_table(r, cfg.lba_size)).c_str(), stdout);
	return kExitOk;
}

} // namespace

void add_simulate_command(CLI::App &app, int &exit_code, std::vector<WorkloadFactory> factories)
{
	auto args = std::make_shared<Args>();
	factories.push_back(workload::simulate_factory());
	auto facs = std::make_shared<std::vector<WorkloadFactory>>(std::move(factories));
	CLI::App *sub = app.add_subcommand(
		"simulate", "project the WAF of a workload on the built-in FDP SSD model, with and "
			    "without placement");
	std::string names = "uniform|hotcold";
	for (const WorkloadFactory &f : *facs)
		for (const std::string &n : f.names)
			names += "|" + n;
	sub->add_option("--workload", args->workload, "workload: " + names)->capture_default_str();
	sub->add_option("--capacity", args->capacity, "logical capacity (KiB, MiB, GiB, TiB)")
		->capture_default_str();
	sub->add_option("--op", args->op, "over-provisioning, (physical - logical) / logical")
		->capture_default_str();
	sub->add_option("--ru-size", args->ru_size, "reclaim unit size")->capture_default_str();
	sub->add_option("--handles", args->handles, "reclaim unit handles")->capture_default_str();
	sub->add_option("--util", args->util, "fraction of the logical capacity the workload uses")
		->capture_default_str();
	sub->add_option("--placement", args->placement, "none|hint|writer|learned|oracle|all, or a comma list (all: what the workload supports: none, hint, writer, learned, oracle)")
		->capture_default_str();
	sub->add_option("-o,--output", args->output, "table|json")->capture_default_str();
	sub->add_option("--gc", args->gc, "GC policy: greedy|cost-benefit")->capture_default_str();
	sub->add_option("--mapping-unit", args->mapping_unit, "FTL mapping unit (and write size)")
		->capture_default_str();
	sub->add_option("--lba-size", args->lba_size, "512|4096")->capture_default_str();
	sub->add_option("--writes", args->writes,
			"measured length: device writes (uniform) or cold-data lifetimes (hotcold); a warm-up runs first")
		->capture_default_str();
	sub->add_option("--seed", args->seed, "random seed")->capture_default_str();
	sub->add_option("--ruh-types", args->ruh_types,
			"handle types: initially|persistently for every handle, or a comma list of one per handle")
		->capture_default_str();
	sub->add_option("--sweep", args->sweep,
			"util=START:END:STEP or op=START:END:STEP: the same run at each value, every --placement; "
			"prints WAF per placement and value")
		->type_name("KEY=START:END:STEP");
	sub->add_option("--plot", args->plot, "with --sweep: write WAF against the swept value to FILE.svg")
		->type_name("FILE.svg");
	sub->add_flag("--ruh", args->ruh,
		      "after the table, print the model's placement handles at the end of each run "
		      "(RUAMW and bytes per handle; in JSON always, as ruhss)");
	for (const WorkloadFactory &f : *facs)
		if (f.add_options)
			f.add_options(*sub);
	sub->callback([args, facs, sub, &exit_code] {
		args->util_given = sub->count("--util") > 0;
		args->op_given = sub->count("--op") > 0;
		exit_code = run_simulate(*args, *facs);
	});
}

} // namespace kvfdp::sim
