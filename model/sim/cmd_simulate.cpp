// `kvfdp simulate`: options, validation (exit 2 with a one-line error), runs, table / JSON.
#include "model/sim/cmd_simulate.hpp"

#include <cstdio>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "proto/exit_codes.hpp"
#include "model/plot/line_chart.hpp"
#include "model/sim/model_args.hpp"
#include "model/sim/simulate.hpp"
#include "model/sim/sweep.hpp"
#include "model/workload/disk_tier_cli.hpp"
#include "model/workload/factory.hpp"
#include "model/workload/llmd_cli.hpp"

namespace kvfdp::sim {
namespace {

using proto::kExitError;
using proto::kExitOk;
using proto::kExitUsage;

// Option values as typed; parsed in the callback so every error names its option.
struct Args {
	ModelArgs model;
	std::string placement = "all";
	std::string output = "table";
	std::string sweep;  // --sweep KEY=START:END:STEP, "" for one run
	std::string plot;   // --plot FILE.svg
	bool ruh = false;
	bool util_given = false, op_given = false;
	std::string grouping = "order";  // --learned-grouping
	bool shadows = false;            // --learned-shadows
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
		// What the run placed there (model/sim/placer.hpp): classes, writers or learned keys.
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

// --sweep: the parsed spec, refused where it cannot run: with the option it sweeps also
// given, with --ruh, or (op) a point the model refuses. Returns the error line, or "".
std::string sweep_arg(const Args &a, const model::ModelConfig &cfg, std::optional<Sweep> *out)
{
	auto s = parse_sweep(a.sweep);
	if (!s)
		return s.error().message();
	if ((s->key == "util" && a.util_given) || (s->key == "op" && a.op_given))
		return "--sweep: '" + a.sweep + "' sets --" + s->key + " at each point; drop --" +
		       s->key;
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
				return "--sweep: '" + a.sweep + "' at op " + at +
				       ": model: " + ok.error().message();
			}
		}
	*out = std::move(*s);
	return "";
}

// The caption under a sweep's plot: the run's parameters, the swept one left out.
std::vector<std::string> sweep_caption(const Args &a, const Workload &w, const Sweep &s)
{
	const ModelArgs &m = a.model;
	std::string line = "workload " + w.name() + ", capacity " + m.capacity;
	line += s.key == "op" ? ", util " + m.util : ", OP " + m.op;
	line += ", RU size " + m.ru_size + ", " + m.handles + " handles, GC " + m.gc + ", seed " +
		m.seed;
	return {line,
		"kvfdp simulate --sweep " + a.sweep + " (WAF of the measured part of each run)"};
}

// Runs every placement at each point of s (cfg.op or the workload's util set to the point),
// prints the sweep's table (or JSON), then writes --plot. Returns kExitOk / kExitError /
// kExitUsage (a point the workload refuses).
int run_sweep(const Args &a, const std::vector<WorkloadFactory> &factories,
	      const model::ModelConfig &base, const Knobs &k, const Sweep &s,
	      const std::vector<Placement> &placements, const PlacerOptions &learner)
{
	std::vector<SweepPoint> points;
	std::string name;
	std::vector<std::string> caption;
	for (double v : s.values) {
		model::ModelConfig cfg = base;
		if (s.key == "op")
			cfg.op = v;
		std::string err;
		WorkloadPoint at;
		if (s.key == "util")
			at.util = v;
		auto w = make_workload(a.model, factories, cfg, k, at, &err);
		if (!w) {
			std::fprintf(stderr, "kvfdp simulate: --sweep %s at %s %g: %s\n",
				     a.sweep.c_str(), s.key.c_str(), v, err.c_str());
			return kExitUsage;
		}
		if (caption.empty()) {
			name = w->name();
			caption = sweep_caption(a, *w, s);
		}
		SweepPoint pt{v, {}};
		for (Placement p : placements) {
			char label[160];
			std::snprintf(label, sizeof label, "simulate %s/%s %s=%g", name.c_str(),
				      placement_name(p), s.key.c_str(), v);
			std::unique_ptr<TtyProgress> bar = tty_progress(label);
			auto r = run_one(cfg, *w, p, bar.get(), learner);
			bar.reset();
			if (!r) {
				std::fprintf(stderr, "kvfdp simulate: %s=%g: %s\n", s.key.c_str(),
					     v, r.error().message().c_str());
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
	auto wrote = plot::write_text_file(
		a.plot, plot::render_svg(sweep_chart(s, points, name, std::move(caption))));
	if (!wrote) {
		std::fprintf(stderr, "kvfdp simulate: --plot: %s (the table above is complete)\n",
			     wrote.error().message().c_str());
		return kExitError;
	}
	return kExitOk;
}

// --learned-grouping and --learned-shadows into *o; "" or the one-line error.
std::string learner_arg(const Args &a, PlacerOptions *o)
{
	if (a.grouping == "order")
		o->grouping = placement::Grouping::order;
	else if (a.grouping == "lifetime")
		o->grouping = placement::Grouping::lifetime;
	else if (a.grouping == "cost")
		o->grouping = placement::Grouping::cost;
	else
		return "--learned-grouping: '" + a.grouping + "' must be order, lifetime or cost";
	o->shadows = a.shadows;
	return "";
}

// Returns kExitOk / kExitError / kExitUsage.
int run_simulate(const Args &a, const std::vector<WorkloadFactory> &factories)
{
	model::ModelConfig cfg;
	Knobs knobs;
	PlacerOptions learner;
	std::string err = parse_model_args(a.model, &cfg, &knobs);
	if (err.empty() && a.output != "table" && a.output != "json")
		err = "-o/--output: '" + a.output + "' must be table or json";
	if (err.empty())
		err = learner_arg(a, &learner);

	std::optional<Sweep> sweep;
	if (err.empty() && !a.sweep.empty())
		err = sweep_arg(a, cfg, &sweep);
	if (err.empty() && !a.plot.empty() && !sweep)
		err = "--plot: draws a sweep; add --sweep util=START:END:STEP (or op=START:END:STEP)";
	std::unique_ptr<Workload> workload;
	if (err.empty())
		workload = make_workload(a.model, factories, cfg, knobs, WorkloadPoint{}, &err);
	std::vector<Placement> placements;
	if (err.empty())
		placements = placements_arg(a.placement, *workload, &err);
	if (!err.empty()) {
		std::fprintf(stderr, "kvfdp simulate: %s\n", err.c_str());
		return kExitUsage;
	}
	if (sweep)
		return run_sweep(a, factories, cfg, knobs, *sweep, placements, learner);

	std::vector<RunReport> runs;
	for (Placement p : placements) {
		std::unique_ptr<TtyProgress> bar =
			tty_progress("simulate " + workload->name() + "/" + placement_name(p));
		auto r = run_one(cfg, *workload, p, bar.get(), learner);
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

}  // namespace

void add_simulate_command(CLI::App &app, int &exit_code, std::vector<WorkloadFactory> factories)
{
	auto args = std::make_shared<Args>();
	factories.push_back(workload::llmd_factory());  // before --kv-trace's chunk store
	factories.push_back(workload::disk_tier_factory());
	factories.push_back(workload::simulate_factory());
	auto facs = std::make_shared<std::vector<WorkloadFactory>>(std::move(factories));
	CLI::App *sub = app.add_subcommand(
		"simulate", "project the WAF of a workload on the built-in FDP SSD model, with and "
			    "without placement");
	add_model_options(*sub, args->model, workload_names(*facs));
	sub->add_option(
		   "--placement", args->placement,
		   "none|hint|writer|learned|oracle|all, or a comma list (all: what the workload supports: none, hint, writer, learned, oracle)")
		->capture_default_str();
	sub->add_option("-o,--output", args->output, "table|json")->capture_default_str();
	sub->add_option(
		   "--sweep", args->sweep,
		   "util=START:END:STEP or op=START:END:STEP: the same run at each value, every --placement; "
		   "prints WAF per placement and value")
		->type_name("KEY=START:END:STEP");
	sub->add_option("--plot", args->plot,
			"with --sweep: write WAF against the swept value to FILE.svg")
		->type_name("FILE.svg");
	sub->add_option("--learned-grouping", args->grouping,
			"learned's grouping rule: order (kvfdpd's), lifetime (the lifetime ratio "
			"alone) or cost (by the projection of what mixing costs; experimental)")
		->capture_default_str();
	sub->add_flag("--learned-shadows", args->shadows,
		      "experimental: shadow copies of the model choose learned's grouping among "
		      "its own and the fixed policies' (-o json: learned.choice)");
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

}  // namespace kvfdp::sim
