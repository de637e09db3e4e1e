// The shared options of simulate and advise: registration, parsing, the workload, progress.
#include "model/sim/model_args.hpp"

#include <unistd.h>

#include <cstdio>

#include <CLI/CLI.hpp>

#include "model/sim/parse.hpp"
#include "model/sim/simulate.hpp"
#include "model/sim/synthetic.hpp"

namespace kvfdp::sim {
namespace {

uint64_t size_arg(const char *name, const std::string &v, std::string *err)
{
	auto s = parse_size(v);
	if (!s)
		*err = std::string(name) + ": '" + v +
		       "' is not a size; use e.g. 4096, 64KiB, 1GiB, 2TiB";
	return s.value_or(0);
}

double number_arg(const char *name, const std::string &v, double lo, double hi, bool lo_open,
		  std::string *err)
{
	auto d = parse_number(v);
	if (!d || (lo_open ? *d <= lo : *d < lo) || *d > hi) {
		char buf[160];
		std::snprintf(buf, sizeof buf, "%s: '%s' must be a number in %c%g, %g]", name,
			      v.c_str(), lo_open ? '(' : '[', lo, hi);
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
		const std::string t =
			v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		if (t == "initially")
			types.push_back(model::HandleType::initially_isolated);
		else if (t == "persistently")
			types.push_back(model::HandleType::persistently_isolated);
		else
			return "--ruh-types: '" + t +
			       "' is not a handle type; use initially or persistently";
		if (comma == std::string::npos)
			break;
		pos = comma + 1;
	}
	if (types.size() == 1)
		types.assign(cfg.nruh, types.front());
	if (types.size() != cfg.nruh)
		return "--ruh-types: " + std::to_string(types.size()) + " types for " +
		       std::to_string(cfg.nruh) + " handles; give one type, or one per handle";
	cfg.ruh_types = std::move(types);
	return "";
}

}  // namespace

void add_model_options(CLI::App &sub, ModelArgs &a, const std::string &names)
{
	sub.add_option("--workload", a.workload, "workload: " + names)->capture_default_str();
	sub.add_option("--capacity", a.capacity, "logical capacity (KiB, MiB, GiB, TiB)")
		->capture_default_str();
	sub.add_option("--op", a.op, "over-provisioning, (physical - logical) / logical")
		->capture_default_str();
	sub.add_option("--ru-size", a.ru_size, "reclaim unit size")->capture_default_str();
	sub.add_option("--handles", a.handles, "reclaim unit handles")->capture_default_str();
	sub.add_option("--util", a.util, "fraction of the logical capacity the workload uses")
		->capture_default_str();
	sub.add_option("--gc", a.gc, "GC policy: greedy|cost-benefit")->capture_default_str();
	sub.add_option("--mapping-unit", a.mapping_unit, "FTL mapping unit (and write size)")
		->capture_default_str();
	sub.add_option("--lba-size", a.lba_size, "512|4096")->capture_default_str();
	sub.add_option(
		   "--writes", a.writes,
		   "measured length: device writes (uniform) or cold-data lifetimes (hotcold); a warm-up runs first")
		->capture_default_str();
	sub.add_option("--seed", a.seed, "random seed")->capture_default_str();
	sub.add_option(
		   "--ruh-types", a.ruh_types,
		   "handle types: initially|persistently for every handle, or a comma list of one per handle")
		->capture_default_str();
}

std::string workload_names(const std::vector<WorkloadFactory> &factories)
{
	std::string names = "uniform|hotcold";
	for (const WorkloadFactory &f : factories)
		for (const std::string &n : f.names)
			names += "|" + n;
	return names;
}

std::string parse_model_args(const ModelArgs &a, model::ModelConfig *cfgp, Knobs *k)
{
	std::string err;
	model::ModelConfig &cfg = *cfgp;
	cfg.logical_bytes = size_arg("--capacity", a.capacity, &err);
	if (err.empty())
		cfg.ru_size = size_arg("--ru-size", a.ru_size, &err);
	if (err.empty())
		cfg.mapping_unit =
			static_cast<uint32_t>(size_arg("--mapping-unit", a.mapping_unit, &err));
	if (err.empty()) {
		auto lba = parse_uint(a.lba_size);
		if (!lba || (*lba != 512 && *lba != 4096))
			err = "--lba-size: '" + a.lba_size + "' must be 512 or 4096";
		else
			cfg.lba_size = static_cast<uint32_t>(*lba);
	}
	if (err.empty())
		cfg.op = number_arg("--op", a.op, 0, 10, true, &err);
	if (err.empty())
		k->util = number_arg("--util", a.util, 0, 1, true, &err);
	if (err.empty())
		k->writes = number_arg("--writes", a.writes, 0, 1000, true, &err);
	if (err.empty()) {
		auto h = parse_uint(a.handles);
		if (!h || *h < 1 || *h > 128)
			err = "--handles: '" + a.handles + "' must be an integer from 1 to 128";
		else
			cfg.nruh = static_cast<uint16_t>(*h);
	}
	if (err.empty()) {
		auto s = parse_uint(a.seed);
		if (!s)
			err = "--seed: '" + a.seed + "' must be a non-negative integer";
		else
			k->seed = *s;
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
	if (err.empty()) {
		auto v = model::validate(cfg);
		if (!v)
			err = "model: " + v.error().message() +
			      " (see --capacity, --op, --ru-size, --handles)";
	}
	return err;
}

std::unique_ptr<Workload> make_workload(const ModelArgs &a,
					const std::vector<WorkloadFactory> &factories,
					const model::ModelConfig &cfg, const Knobs &k,
					const WorkloadPoint &at, std::string *errp)
{
	std::unique_ptr<Workload> workload;
	std::string &err = *errp;
	// Factories first: their options (e.g. --kv-trace) claim the run even when --workload
	// is left at its default.
	for (const WorkloadFactory &f : factories) {
		if (!err.empty() || workload || !f.make)
			break;
		auto w = f.make(a.workload, cfg, at);
		if (!w)
			err = w.error().message();
		else
			workload = std::move(*w);
	}
	if (err.empty() && !workload) {
		if (a.workload == "uniform") {
			UniformOptions o;
			o.util = at.util.value_or(k.util);
			o.measure_writes = k.writes;
			o.write_bytes = cfg.mapping_unit;
			o.seed = k.seed;
			workload = std::make_unique<UniformWorkload>(o);
		} else if (a.workload == "hotcold") {
			HotColdOptions o;
			o.util = at.util.value_or(k.util);
			o.measure_lifetimes = k.writes;
			o.write_bytes = cfg.mapping_unit;
			o.seed = k.seed;
			workload = std::make_unique<HotColdWorkload>(o);
		} else {
			std::string names = "uniform, hotcold";
			for (const WorkloadFactory &f : factories)
				for (const std::string &n : f.names)
					names += ", " + n;
			err = "--workload: '" + a.workload + "' is not a workload; use one of " +
			      names;
		}
	}
	if (!err.empty())
		workload.reset();
	return workload;
}

std::vector<Placement> placements_arg(const std::string &arg, const Workload &w, std::string *err)
{
	const std::vector<Placement> supported = runnable_placements(w);
	if (arg == "all")
		return supported;
	std::vector<Placement> placements;
	size_t pos = 0;
	for (;;) {
		const size_t comma = arg.find(',', pos);
		const std::string one = arg.substr(
			pos, comma == std::string::npos ? std::string::npos : comma - pos);
		auto p = parse_placement(one);
		if (!p) {
			*err = "--placement: '" + one +
			       "' must be none, hint, writer, learned, oracle or all (or a comma list)";
			return {};
		}
		bool ok = false;
		for (Placement s : supported)
			ok = ok || s == *p;
		if (!ok) {
			std::string names;
			for (Placement s : supported)
				names += std::string(names.empty() ? "" : ", ") + placement_name(s);
			*err = "--placement: workload " + w.name() + " supports " + names +
			       " (or all)";
			return {};
		}
		placements.push_back(*p);
		if (comma == std::string::npos)
			return placements;
		pos = comma + 1;
	}
}

TtyProgress::~TtyProgress()
{
	if (shown_ >= 0)
		std::fprintf(stderr, "\r%*s\r", static_cast<int>(label_.size()) + 40, "");
}

void TtyProgress::update(double f)
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

std::unique_ptr<TtyProgress> tty_progress(const std::string &label)
{
	if (isatty(STDERR_FILENO) != 1)
		return nullptr;
	return std::make_unique<TtyProgress>(label);
}

}  // namespace kvfdp::sim
