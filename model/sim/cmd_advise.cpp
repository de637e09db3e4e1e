// `kvfdp advise`: options, the trace source over simulate's workloads, the report.
#include "model/sim/cmd_advise.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string_view>

#include <CLI/CLI.hpp>

#include "proto/exit_codes.hpp"
#include "model/sim/advise.hpp"
#include "model/sim/advise_window.hpp"
#include "model/sim/model_args.hpp"
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
	std::string target = "1.05";
	std::string sweep{kDefaultAdviseSweep};
	std::string placement = "all";
	std::string output = "table";
	WindowArgs window;  // --twin, --window, --save-window
};

// advise's own options: not passed on to the "check:" simulate command.
bool advise_only(const std::string &name)
{
	return name == "--target" || name == "--sweep" || name == "--placement" ||
	       name == "--output" || name == "--help" || name == "--twin" || name == "--window" ||
	       name == "--save-window";
}

// v as one shell word.
std::string shell_word(const std::string &v)
{
	bool plain = !v.empty();
	for (char c : v)
		plain = plain && (std::isalnum(static_cast<unsigned char>(c)) ||
				  std::string_view("-_./=:,+%@").find(c) != std::string_view::npos);
	if (plain)
		return v;
	std::string q = "'";
	for (char c : v)
		q += c == '\'' ? std::string("'\\''") : std::string(1, c);
	return q + "'";
}

// The options given on sub that simulate takes too, as typed: what replays the same source.
// The eviction order's option is left out when advise chooses it, --evict-marks when it
// chooses the marks, --capacity when it sets it (a block trace):
// TraceSource::simulate_command adds them.
std::string simulate_args(const CLI::App &sub, const char *evict_option, bool evict_chosen,
			  bool marks_chosen, bool capacity_set)
{
	std::string out;
	for (const CLI::Option *opt : sub.get_options()) {
		if (opt->count() == 0 || opt->get_lnames().empty())
			continue;
		const std::string name = "--" + opt->get_lnames().front();
		if (advise_only(name) || (evict_chosen && name == evict_option) ||
		    (marks_chosen && name == "--evict-marks") ||
		    (capacity_set && name == "--capacity"))
			continue;
		if (opt->get_type_size() == 0) {
			out += (out.empty() ? "" : " ") + name;
			continue;
		}
		for (const std::string &v : opt->results())
			out += (out.empty() ? "" : " ") + name + " " + shell_word(v);
	}
	return out;
}

// The workload simulate's options name, replayed on a fresh model at each setting. A block
// trace writes where it was recorded, whatever --util says: there utilisation u is the
// traced --capacity on a drive of --capacity / u (the rest never written, as a partition
// left free).
class TraceSource final : public AdviseSource {
public:
	TraceSource(const ModelArgs &a, const std::vector<WorkloadFactory> &factories,
		    const model::ModelConfig &cfg, const Knobs &k, bool block_trace)
	    : a_(a), factories_(factories), cfg_(cfg), knobs_(k), block_trace_(block_trace)
	{
	}

	// The model at s: --capacity / util for a block trace (rounded up to a mapping unit).
	[[nodiscard]] model::ModelConfig config_at(double util) const
	{
		model::ModelConfig c = cfg_;
		if (block_trace_) {
			const auto units = static_cast<uint64_t>(std::ceil(
				static_cast<double>(cfg_.logical_bytes) / util / cfg_.mapping_unit -
				1e-9));
			c.logical_bytes = units * cfg_.mapping_unit;
		}
		return c;
	}
	void set_simulate_args(std::string args) { args_ = std::move(args); }
	std::string simulate_command(const AdviseSetting &s) const override
	{
		std::string cmd = "kvfdp simulate " + args_ + (args_.empty() ? "" : " ");
		cmd += block_trace_
			       ? "--capacity " + std::to_string(config_at(s.util).logical_bytes)
			       : "--util " + util_word(s.util);
		cmd += std::string(" --placement ") + placement_name(s.placement);
		if (!s.evict.empty())
			cmd += std::string(" ") + workload::evict_option_for(a_.workload) + " " +
			       s.evict;
		if (!s.marks.empty())
			cmd += " --evict-marks " + s.marks;
		return cmd;
	}
	std::string util_note() const override
	{
		if (!block_trace_)
			return {};
		return "UTIL (a block trace): the traced " + a_.capacity +
		       " on a drive of that over UTIL, the rest never written (simulate --capacity)";
	}

	// Builds the workload once at util (reading and checking any trace): the error line, or "".
	std::string open(double util)
	{
		std::string err;
		at_ = WorkloadPoint{util, "", ""};
		workload_ = make_workload(a_, factories_, cfg_, knobs_, at_, &err);
		return err;
	}
	[[nodiscard]] const Workload &workload() const { return *workload_; }

	std::string name() const override { return workload_->name(); }
	std::vector<Placement> placements() const override
	{
		return runnable_placements(*workload_);
	}
	std::vector<std::string> evictions() const override
	{
		for (const WorkloadFactory &f : factories_)
			if (f.evictions)
				if (auto e = f.evictions(a_.workload); !e.empty())
					return e;
		return {};
	}
	std::vector<std::string> marks() const override
	{
		for (const WorkloadFactory &f : factories_)
			if (f.marks)
				if (auto m = f.marks(a_.workload); !m.empty())
					return m;
		return {};
	}
	Result<RunReport> run(const AdviseSetting &s) override
	{
		if (!workload_ || at_.util != s.util || at_.evict != s.evict ||
		    at_.marks != s.marks) {
			std::string err;
			at_ = WorkloadPoint{s.util, s.evict, s.marks};
			workload_ =
				make_workload(a_, factories_, config_at(s.util), knobs_, at_, &err);
			if (!workload_) {
				char at[48];
				std::snprintf(at, sizeof at, "at util %g: ", s.util);
				return guidance_error(std::errc::invalid_argument, at + err);
			}
		}
		char label[160];
		std::snprintf(label, sizeof label, "advise %s/%s util=%g%s%s%s%s",
			      workload_->name().c_str(), placement_name(s.placement), s.util,
			      s.evict.empty() ? "" : " ", s.evict.c_str(),
			      s.marks.empty() ? "" : " marks=", s.marks.c_str());
		std::unique_ptr<TtyProgress> bar = tty_progress(label);
		return run_one(config_at(s.util), *workload_, s.placement, bar.get());
	}

private:
	const ModelArgs &a_;
	const std::vector<WorkloadFactory> &factories_;
	model::ModelConfig cfg_;
	Knobs knobs_;
	bool block_trace_;
	std::string args_;  // simulate_args
	WorkloadPoint at_;
	std::unique_ptr<Workload> workload_;
};

// --target, --sweep and -o into o: the error line, or "".
std::string parse_common(const Args &a, const CLI::App &sub, AdviseOptions *o)
{
	if (sub.count("--util") > 0)
		return "--util: advise sweeps the utilisation; give the range with --sweep util=START:END:STEP "
		       "(default " +
		       std::string(kDefaultAdviseSweep) + ")";
	auto t = parse_advise_target(a.target);
	if (!t)
		return t.error().message();
	o->target = *t;
	auto s = parse_advise_sweep(a.sweep);
	if (!s)
		return s.error().message();
	o->sweep = std::move(*s);
	if (a.output != "table" && a.output != "json")
		return "-o/--output: '" + a.output + "' must be table or json";
	return "";
}

// Parses everything into o and opens src: the one error line, or "".
std::string prepare(const Args &a, const CLI::App &sub, TraceSource *src, AdviseOptions *o)
{
	std::string err = parse_common(a, sub, o);
	if (!err.empty())
		return err;
	// An evictor's marks set how full its filesystem runs: advise sweeps them, on the whole
	// namespace unless --sweep says otherwise.
	const bool has_marks = !src->marks().empty();
	if (has_marks && sub.count("--sweep") == 0) {
		auto whole = parse_advise_sweep("util=1:1:1");
		if (!whole)
			return whole.error().message();
		o->sweep = std::move(*whole);
	}
	err = src->open(o->sweep.values.front());
	if (!err.empty())
		return err;
	if (a.placement != "all") {
		o->placements = placements_arg(a.placement, src->workload(), &err);
		for (Placement p : o->placements)
			if (p == Placement::oracle)
				err = "--placement: oracle places by the actual time of death, which no host knows; "
				      "choose among none, hint, writer and learned";
		if (!err.empty())
			return err;
	}
	const char *evict_option = workload::evict_option_for(a.model.workload);
	const CLI::Option *evict = sub.get_option_no_throw(evict_option);
	const bool store = !src->evictions().empty();
	if (evict && evict->count() > 0 && store)
		o->evictions = {evict->as<std::string>()};
	const CLI::Option *marks = sub.get_option_no_throw("--evict-marks");
	if (marks && marks->count() > 0 && has_marks)
		o->marks = {marks->as<std::string>()};
	src->set_simulate_args(
		simulate_args(sub, evict_option, store, has_marks, sub.count("--blk-trace") > 0));
	return "";
}

// advise over the twin's window (advise_window.cpp): the options, then the run.
int run_window(const Args &a, const CLI::App &sub, const TwinWindowClient &client)
{
	AdviseOptions o;
	std::string err = parse_common(a, sub, &o);
	if (err.empty())
		err = window_option_refusal(sub);
	for (size_t pos = 0; err.empty() && a.placement != "all" && pos != std::string::npos;) {
		const size_t comma = a.placement.find(',', pos);
		const std::string one =
			a.placement.substr(pos, comma == std::string::npos ? comma : comma - pos);
		auto p = parse_placement(one);
		if (!p || *p == Placement::oracle || *p == Placement::hint)
			err = "--placement: '" + one +
			      "': the twin's window runs none, writer (the handle kvfdpd placed "
			      "each write on) and learned, or all (or a comma list)";
		else
			o.placements.push_back(*p);
		pos = comma == std::string::npos ? comma : comma + 1;
	}
	if (!err.empty()) {
		std::fprintf(stderr, "kvfdp advise: %s\n", err.c_str());
		return kExitUsage;
	}
	return run_window_advise(a.window, client, o, a.target, a.output == "json");
}

// Returns kExitOk / kExitError / kExitUsage.
int run_advise(const Args &a, const CLI::App &sub, const std::vector<WorkloadFactory> &factories)
{
	model::ModelConfig cfg;
	Knobs knobs;
	std::string err = parse_model_args(a.model, &cfg, &knobs);
	TraceSource src(a.model, factories, cfg, knobs, sub.count("--blk-trace") > 0);
	AdviseOptions o;
	if (err.empty())
		err = prepare(a, sub, &src, &o);
	if (!err.empty()) {
		std::fprintf(stderr, "kvfdp advise: %s\n", err.c_str());
		return kExitUsage;
	}
	auto adv = advise(src, o);
	if (!adv) {
		std::fprintf(stderr, "kvfdp advise: %s\n", adv.error().message().c_str());
		return kExitError;
	}
	if (a.output == "json")
		std::printf("%s\n", advice_to_json(*adv).dump().c_str());
	else
		std::fputs(advice_to_table(*adv).c_str(), stdout);
	std::fflush(stdout);
	if (adv->pick)
		return kExitOk;
	// The table ends with the same line; stderr gets it alone for scripts and -o json.
	std::fprintf(stderr, "kvfdp advise: %s\n", no_setting_line(*adv).c_str());
	return kExitError;
}

}  // namespace

void add_advise_command(CLI::App &app, int &exit_code, std::vector<WorkloadFactory> factories,
			TwinWindowClient twin)
{
	auto args = std::make_shared<Args>();
	factories.push_back(workload::llmd_factory());  // before --kv-trace's chunk store
	factories.push_back(workload::simulate_factory());
	auto facs = std::make_shared<std::vector<WorkloadFactory>>(std::move(factories));
	CLI::App *sub = app.add_subcommand(
		"advise",
		"for a WAF target: the utilisation, placement and (for a chunk store) eviction to run, "
		"from a sweep of the FDP SSD model over a trace or any workload simulate takes");
	add_model_options(*sub, args->model, workload_names(*facs));
	// Registered so that giving it gets advise's own line (prepare), not CLI11's.
	sub->get_option("--util")
		->description("not taken: advise sweeps the utilisation (--sweep)")
		->default_str("");
	sub->add_option("--target", args->target,
			"the WAF to meet (media bytes / host bytes), 1.0 or more")
		->capture_default_str();
	sub->add_option("--sweep", args->sweep, "the utilisations to try, util=START:END:STEP")
		->type_name("util=START:END:STEP")
		->capture_default_str();
	sub->add_option(
		   "--placement", args->placement,
		   "the placements to choose from: all (what the workload supports, oracle left out) or a comma list")
		->capture_default_str();
	sub->add_option("-o,--output", args->output, "table|json")->capture_default_str();
	sub->add_flag(
		"--twin", args->window.twin,
		"advise from the recent window of kvfdpd's WAF twin (the daemon at --socket; giving "
		"--socket alone does the same)");
	sub->add_option(
		   "--window", args->window.window_file,
		   "advise from a twin window saved with --save-window (reproduces that advice)")
		->type_name("FILE");
	sub->add_option(
		   "--save-window", args->window.save_window,
		   "with --twin: write the window to FILE first; the check line then reruns it")
		->type_name("FILE");
	for (const WorkloadFactory &f : *facs)
		if (f.add_options)
			f.add_options(*sub);
	sub->footer(
		"A chunk store (--kv-trace without --workload host) is tried with each eviction "
		"order, lru, fifo and fifo2, unless --kv-evict names one; --workload llmd with each "
		"--evict-order (hash, lru, fifo) and the marks 95,89 to 60,40 on the whole namespace, "
		"unless --evict-order, --evict-marks or --sweep name them. Exit codes: 0 a "
		"recommendation, 1 no setting meets the target (or a run failed), 2 a bad option. "
		"docs/advise.md");
	auto client = std::make_shared<TwinWindowClient>(std::move(twin));
	sub->callback([args, facs, sub, client, &exit_code] {
		exit_code = wants_window(args->window, *client) ? run_window(*args, *sub, *client)
								: run_advise(*args, *sub, *facs);
	});
}

}  // namespace kvfdp::sim
