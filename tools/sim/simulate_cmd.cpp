// `kvfdp simulate`: options, validation (exit 2 with a one-line error), runs, table / JSON.
#include "tools/sim/simulate_cmd.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "tools/sim/parse.hpp"
#include "tools/sim/simulate.hpp"
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
	bool ruh = false;
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

	std::unique_ptr<Workload> workload;
	// Factories first: their options (e.g. --kv-trace) claim the run even when --workload
	// is left at its default.
	for (const WorkloadFactory &f : factories) {
		if (!err.empty() || workload || !f.make)
			break;
		auto w = f.make(a.workload, cfg);
		if (!w)
			err = w.error().message();
		else
			workload = std::move(*w);
	}
	if (err.empty() && !workload) {
		if (a.workload == "uniform") {
			UniformOptions o;
			o.util = util;
			o.measure_writes = writes;
			o.write_bytes = cfg.mapping_unit;
			o.seed = seed;
			workload = std::make_unique<UniformWorkload>(o);
		} else if (a.workload == "hotcold") {
			HotColdOptions o;
			o.util = util;
			o.measure_lifetimes = writes;
			o.write_bytes = cfg.mapping_unit;
			o.seed = seed;
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

	std::vector<Placement> placements;
	if (err.empty()) {
		const std::vector<Placement> supported = runnable_placements(*workload);
		if (a.placement == "all") {
			placements = supported;
		} else if (auto p = parse_placement(a.placement)) {
			bool ok = false;
			for (Placement s : supported)
				ok = ok || s == *p;
			if (ok) {
				placements.push_back(*p);
			} else {
				std::string names;
				for (Placement s : supported)
					names += std::string(names.empty() ? "" : ", ") + placement_name(s);
				err = "--placement: workload " + workload->name() + " supports " + names +
				      " (or all)";
			}
		} else {
			err = "--placement: '" + a.placement + "' must be none, hint, writer, learned, oracle or all";
		}
	}
	if (!err.empty()) {
		std::fprintf(stderr, "kvfdp simulate: %s\n", err.c_str());
		return kExitUsage;
	}

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
	sub->add_option("--placement", args->placement, "none|hint|writer|learned|oracle|all (all the workload supports: none, hint, writer, learned, oracle)")
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
	sub->add_flag("--ruh", args->ruh,
		      "after the table, print the model's placement handles at the end of each run "
		      "(RUAMW and bytes per handle; in JSON always, as ruhss)");
	for (const WorkloadFactory &f : *facs)
		if (f.add_options)
			f.add_options(*sub);
	sub->callback([args, facs, &exit_code] { exit_code = run_simulate(*args, *facs); });
}

} // namespace kvfdp::sim
