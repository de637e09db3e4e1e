// simulate_factory: WorkloadOptions + make_workload behind sim::WorkloadFactory.
#include "model/workload/factory.hpp"

#include <cstdlib>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "model/workload/cli.hpp"

namespace kvfdp::workload {

namespace {

// The value of one of simulate's own options, as typed or its default.
std::string option_text(CLI::App *sub, const char *name)
{
	if (!sub)
		return {};
	CLI::Option *opt = sub->get_option_no_throw(name);
	if (!opt)
		return {};
	return opt->as<std::string>();
}

}  // namespace

sim::WorkloadFactory simulate_factory()
{
	struct State {
		WorkloadOptions opts;
		CLI::App *sub = nullptr;
	};
	auto st = std::make_shared<State>();
	sim::WorkloadFactory f;
	f.names = {"kv", "host", "slots", "hicache", "mixed"};
	f.add_options = [st](CLI::App &sub) {
		st->sub = &sub;
		add_workload_options(sub, st->opts);
	};
	f.make = [st](const std::string &name, const model::ModelConfig &cfg,
		      const sim::WorkloadPoint &at) -> Result<std::unique_ptr<sim::Workload>> {
		if (!selects_workload(st->opts, name))
			return std::unique_ptr<sim::Workload>();
		WorkloadContext ctx;
		// A trace replaces the default workload; naming another one with it is an error.
		ctx.workload = name;
		if (!st->opts.kv_trace.empty() || !st->opts.blk_trace.empty()) {
			if (name != "kv" && name != "uniform" && name != "host" &&
			    name != "hicache" && name != "mixed")
				return guidance_error(
					std::errc::invalid_argument,
					"--workload " + name +
						" cannot be combined with --kv-trace / --blk-trace");
			if (name == "uniform")
				ctx.workload.clear();
		}
		ctx.capacity_bytes = cfg.logical_bytes;
		const std::string util = option_text(st->sub, "--util");
		const std::string seed = option_text(st->sub, "--seed");
		const std::string writes = option_text(st->sub, "--writes");
		// simulate validated these before asking its factories.
		if (!util.empty())
			ctx.utilisation = std::strtod(util.c_str(), nullptr);
		// The slot store's default is the benchmark's 89% use, not simulate's 1.
		CLI::Option *util_opt = st->sub ? st->sub->get_option_no_throw("--util") : nullptr;
		if (name == "slots" && (!util_opt || util_opt->count() == 0))
			ctx.utilisation = 0.89;
		if (at.util)
			ctx.utilisation = *at.util;
		if (!seed.empty())
			ctx.seed = std::strtoull(seed.c_str(), nullptr, 10);
		WorkloadOptions o = st->opts;
		// --workload kv: one device write of warm-up, then --writes measured ones.
		if (!writes.empty()) {
			o.kv_drive_writes = 1.0 + std::strtod(writes.c_str(), nullptr);
			o.slot_measure_writes = std::strtod(writes.c_str(), nullptr);
		}
		if (!at.evict.empty())
			o.kv_evict = at.evict;
		return make_workload(o, ctx);
	};
	f.evictions = [st](const std::string &name) {
		return selects_chunk_store(st->opts, name) ? evict_names()
							   : std::vector<std::string>{};
	};
	return f;
}

}  // namespace kvfdp::workload
