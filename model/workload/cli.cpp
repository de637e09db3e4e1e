// Option parsing and the workload factory for `kvfdp simulate`.
#include "model/workload/cli.hpp"

#include <cmath>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "placement/classes.hpp"
#include "placement/size.hpp"
#include "model/workload/blk_trace.hpp"
#include "model/workload/chunk_store.hpp"
#include "model/workload/host.hpp"
#include "model/workload/kv_synth.hpp"
#include "model/workload/mixed_host.hpp"
#include "model/workload/mooncake.hpp"
#include "model/workload/presets.hpp"
#include "model/workload/slots.hpp"

namespace kvfdp::workload {

namespace {

Error usage(const std::string &what)
{
	return guidance_error(std::errc::invalid_argument, what);
}

// A positive finite number, or false.
bool parse_positive(const std::string &s, double &out)
{
	char *end = nullptr;
	out = std::strtod(s.c_str(), &end);
	return !s.empty() && end == s.c_str() + s.size() && std::isfinite(out) && out > 0;
}

// Three comma-separated non-negative numbers.
bool parse_triple(const std::string &s, std::array<double, 3> &out)
{
	size_t pos = 0;
	for (int i = 0; i < 3; ++i) {
		size_t comma = s.find(',', pos);
		if ((i < 2) == (comma == std::string::npos))
			return false;
		std::string part =
			s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		char *end = nullptr;
		out[i] = std::strtod(part.c_str(), &end);
		if (part.empty() || end != part.c_str() + part.size() || !std::isfinite(out[i]) ||
		    out[i] < 0)
			return false;
		pos = comma + 1;
	}
	return true;
}

// The chunk size rounded to whole 4 KiB file blocks.
uint64_t round_block(double bytes)
{
	auto b = static_cast<uint64_t>(std::llround(bytes / 4096.0));
	return (b ? b : 1) * 4096;
}

}  // namespace

namespace {

// A positive number or N/M fraction ("1/256", "0.5"), or false.
bool parse_fraction(const std::string &s, double &out)
{
	const size_t slash = s.find('/');
	if (slash == std::string::npos)
		return parse_positive(s, out);
	double num = 0, den = 0;
	if (!parse_positive(s.substr(0, slash), num) || !parse_positive(s.substr(slash + 1), den))
		return false;
	out = num / den;
	return true;
}

}  // namespace

Result<uint64_t> chunk_bytes_for(const std::string &model, const std::string &scale)
{
	auto preset = find_preset(model);
	if (!preset)
		return usage("--kv-model: unknown model '" + model + "'; known: " + preset_names());
	double factor = 0;
	if (!parse_fraction(scale, factor))
		return usage("--kv-scale: '" + scale +
			     "' is not a positive number or N/M fraction");
	double bytes = static_cast<double>(preset->bytes_per_token) * kMooncakeBlockTokens * factor;
	if (bytes < 4096.0 / 2)
		return usage("--kv-scale: " + scale +
			     " makes a chunk smaller than a 4 KiB block; raise it");
	return round_block(bytes);
}

namespace {

// The trace replays (--kv-trace, --blk-trace) and the --kv-* options of the KV chunk store and
// the synthetic KV workload.
void add_kv_options(CLI::App &cmd, WorkloadOptions &o)
{
	cmd.add_option("--kv-trace", o.kv_trace,
		       "replay a Mooncake trace (.jsonl) through an LMCache-like chunk store")
		->check(CLI::ExistingFile);
	cmd.add_option("--blk-trace", o.blk_trace,
		       "replay a `kvfdp record` block trace (CSV t_us,op,slba,nlb,class; "
		       "--capacity is the size it addresses)")
		->check(CLI::ExistingFile);
	cmd.add_option("--kv-model", o.kv_model,
		       "KV size preset: bytes per token (" + preset_names() + ")")
		->capture_default_str();
	cmd.add_option(
		   "--kv-scale", o.kv_scale,
		   "scale of a 512-token chunk (e.g. 1/256 makes Llama-3.1-8B's 64 MiB 256 KiB)")
		->capture_default_str();
	cmd.add_option("--kv-requests", o.kv_requests,
		       "replay only the first N requests of --kv-trace (0 = all)")
		->capture_default_str();
	cmd.add_flag("--kv-promote", o.kv_promote,
		     "--kv-trace, hint: rewrite a chunk as a LONG file on its first hit (an engine "
		     "re-storing reused KV)");
	cmd.add_option(
		   "--kv-evict", o.kv_evict,
		   "--kv-trace: which chunk a full store evicts: lru, fifo (write order) or fifo2 "
		   "(write order, a chunk hit since it was written is rewritten instead)")
		->check(CLI::IsMember(evict_names()))
		->capture_default_str();
	cmd.add_option("--kv-mix", o.kv_mix,
		       "--workload kv: shares of written bytes for shared prefixes, conversation "
		       "context and single-query KV")
		->capture_default_str();
	cmd.add_option("--kv-lifetimes", o.kv_lifetimes,
		       "--workload kv: mean lifetimes in seconds of the three populations")
		->capture_default_str();
}

// The --host-* options of the shared-host workload (--workload host).
void add_host_options(CLI::App &cmd, WorkloadOptions &o)
{
	cmd.add_option(
		   "--host-engines", o.host_engines,
		   "--workload host: KV engines, each replaying --kv-trace into its own chunk store")
		->capture_default_str();
	cmd.add_option("--host-speeds", o.host_speeds,
		       "--workload host: replay speed of each engine, e.g. 1,3 (default: all 1)");
	cmd.add_option(
		"--host-shares", o.host_shares,
		"--workload host: each engine's share of the KV store capacity, e.g. 0.5,0.5 "
		"(default: equal)");
	cmd.add_option(
		   "--host-staging-s", o.host_staging_s,
		   "--workload host: seconds a request's staged prompt KV lives (0: no staging)")
		->capture_default_str();
	cmd.add_option("--host-log-rate", o.host_log_rate,
		       "--workload host: log bytes appended per second, unscaled (0: no logs)")
		->capture_default_str();
	cmd.add_option("--host-log-file", o.host_log_file,
		       "--workload host: log file size at rotation, unscaled")
		->capture_default_str();
	cmd.add_option("--host-log-keep", o.host_log_keep,
		       "--workload host: rotated log files kept")
		->capture_default_str();
	cmd.add_option("--host-weights", o.host_weights,
		       "--workload host: model weights size, unscaled (0: no weights)")
		->capture_default_str();
	cmd.add_option("--host-swap-s", o.host_swap_s,
		       "--workload host: seconds between model-weight swaps")
		->capture_default_str();
	cmd.add_option(
		"--host-restart-every", o.host_restart_every,
		"--workload host: device capacities written between each writer's restarts, "
		"a number or N/M fraction (e.g. 1/16); each restart gives the writer a fresh "
		"id, as a new cgroup does (default: never)");
	cmd.add_option("--host-restart-ids", o.host_restart_ids,
		       "--workload host: what a restart does to the writer id: fresh (a new "
		       "cgroup) or kept (a stable writer identity)")
		->check(CLI::IsMember({"fresh", "kept"}))
		->capture_default_str();
}

// The --slot-* options of the slot workload (--workload slots).
void add_slot_options(CLI::App &cmd, WorkloadOptions &o)
{
	cmd.add_option(
		"--slot-objects", o.slot_objects,
		"--workload slots: object size of each worker, unscaled (--kv-scale applies), e.g. "
		"4MiB,4MiB,32MiB (default: LMCache raw_block's 9 workers)");
	cmd.add_option("--slot-rates", o.slot_rates,
		       "--workload slots: relative byte rate of each worker (default: all 1)");
	cmd.add_option(
		"--slot-windows", o.slot_windows,
		"--workload slots: share of the capacity each worker's slots take (default: --util split equally)");
	cmd.add_option(
		"--slot-touches", o.slot_touches,
		"--workload slots: LRU touches per object written, per worker (0: reuse in write order)");
	cmd.add_option(
		"--slot-classes", o.slot_classes,
		"--workload slots: hint class of each worker's bucket (not_set, none, short, medium, long, extreme)");
	cmd.add_option(
		"--slot-writers", o.slot_writers,
		"--workload slots: writer id of each worker, e.g. 1,1,2 (workers of one type share one; default 1..N)");
	cmd.add_flag(
		"--slot-fill-writer", o.slot_fill_writer,
		"--workload slots: first fill every slot and the static tail in LBA order from a writer of its own (no hint)");
	cmd.add_option(
		   "--slot-static-tail", o.slot_static_tail,
		   "--workload slots: share of the capacity after the windows written once at the start and never again")
		->capture_default_str();
	cmd.add_option("--slot-warmup", o.slot_warmup,
		       "--workload slots: capacities written after the fill before measuring")
		->check(CLI::Range(0.0, 100.0))
		->capture_default_str();
}

}  // namespace

void add_workload_options(CLI::App &cmd, WorkloadOptions &o)
{
	add_kv_options(cmd, o);
	add_host_options(cmd, o);
	add_mixed_host_options(cmd, o);
	add_slot_options(cmd, o);
}

namespace {

// A comma-separated list of positive numbers ("" is empty); false on anything else.
bool parse_list(const std::string &s, std::vector<double> &out)
{
	out.clear();
	if (s.empty())
		return true;
	size_t pos = 0;
	for (;;) {
		const size_t comma = s.find(',', pos);
		double v = 0;
		if (!parse_positive(s.substr(pos, comma == std::string::npos ? std::string::npos
									     : comma - pos),
				    v))
			return false;
		out.push_back(v);
		if (comma == std::string::npos)
			return true;
		pos = comma + 1;
	}
}

Result<HostConfig> host_config(const WorkloadOptions &o, uint64_t chunk, double utilisation)
{
	HostConfig h;
	h.store.chunk_bytes = chunk;
	h.store.utilisation = utilisation;
	h.store.promote_on_hit = o.kv_promote;
	auto preset = find_preset(o.kv_model);
	if (!preset)
		return usage("--kv-model: unknown model '" + o.kv_model +
			     "'; known: " + preset_names());
	h.bytes_per_token = preset->bytes_per_token;
	h.scale = static_cast<double>(chunk) /
		  static_cast<double>(preset->bytes_per_token * kMooncakeBlockTokens);
	h.engines = o.host_engines;
	if (!parse_list(o.host_speeds, h.speeds))
		return usage("--host-speeds: want positive numbers like 1,3");
	if (!parse_list(o.host_shares, h.shares))
		return usage("--host-shares: want positive numbers like 0.5,0.5");
	h.staging_s = o.host_staging_s;
	KVFDP_TRY(host_sizes(o, h.log_rate, h.log_file_bytes, h.weights_bytes));
	h.log_keep = o.host_log_keep;
	h.swap_s = o.host_swap_s;
	if (!o.host_restart_every.empty() && !parse_fraction(o.host_restart_every, h.restart_every))
		return usage("--host-restart-every: want a positive number or N/M fraction of the "
			     "capacity, like 1/16");
	h.restart_keeps_id = o.host_restart_ids == "kept";
	KVFDP_TRY(HostWorkload::validate(h));
	return h;
}

// Splits a comma list ("" is empty).
std::vector<std::string> split_list(const std::string &s)
{
	std::vector<std::string> out;
	if (s.empty())
		return out;
	size_t pos = 0;
	for (;;) {
		const size_t comma = s.find(',', pos);
		out.push_back(s.substr(pos, comma == std::string::npos ? std::string::npos
								       : comma - pos));
		if (comma == std::string::npos)
			return out;
		pos = comma + 1;
	}
}

// The slot workers from the --slot-* lists over the defaults; every list given must name
// each worker once (the count comes from --slot-objects, else the defaults').
Result<std::vector<SlotWorker>> slot_workers(const WorkloadOptions &o)
{
	std::vector<SlotWorker> ws = default_slot_workers();
	const auto objects = split_list(o.slot_objects);
	if (!objects.empty() && objects.size() != ws.size()) {
		ws.assign(objects.size(), SlotWorker{});
		for (size_t i = 0; i < ws.size(); i++) {
			ws[i].name = "worker" + std::to_string(i);
			ws[i].rate = 1;
		}
	}
	auto each = [&](const char *name, const std::string &text, auto &&set) -> Result<void> {
		const auto items = split_list(text);
		if (items.empty())
			return ok();
		if (items.size() != ws.size())
			return usage(std::string(name) + ": " + std::to_string(items.size()) +
				     " entries for " + std::to_string(ws.size()) +
				     " workers; give one per worker");
		for (size_t i = 0; i < ws.size(); i++)
			if (!set(ws[i], items[i]))
				return usage(std::string(name) + ": '" + items[i] + "' (worker " +
					     ws[i].name + ") is not valid");
		return ok();
	};
	auto number = [](const std::string &t, double &out, bool zero_ok) {
		char *end = nullptr;
		out = std::strtod(t.c_str(), &end);
		return !t.empty() && end == t.c_str() + t.size() && std::isfinite(out) &&
		       (zero_ok ? out >= 0 : out > 0);
	};
	KVFDP_TRY(each("--slot-objects", o.slot_objects, [](SlotWorker &w, const std::string &t) {
		auto v = placement::parse_size(t);
		if (!v || *v == 0)
			return false;
		w.object_bytes = *v;
		return true;
	}));
	KVFDP_TRY(each("--slot-rates", o.slot_rates, [&](SlotWorker &w, const std::string &t) {
		return number(t, w.rate, false);
	}));
	KVFDP_TRY(each("--slot-windows", o.slot_windows, [&](SlotWorker &w, const std::string &t) {
		return number(t, w.window, false) && w.window <= 1;
	}));
	KVFDP_TRY(each("--slot-touches", o.slot_touches, [&](SlotWorker &w, const std::string &t) {
		return number(t, w.touches, true) && w.touches <= 1000;
	}));
	KVFDP_TRY(each("--slot-classes", o.slot_classes, [](SlotWorker &w, const std::string &t) {
		auto c = placement::parse_class(t);
		if (!c)
			return false;
		w.cls = *c;
		return true;
	}));
	KVFDP_TRY(each("--slot-writers", o.slot_writers, [](SlotWorker &w, const std::string &t) {
		char *end = nullptr;
		const unsigned long long id = std::strtoull(t.c_str(), &end, 10);
		if (t.empty() || t[0] == '-' || end != t.c_str() + t.size() || id == 0 ||
		    id > 1000000)
			return false;
		w.writer = id;
		return true;
	}));
	return ws;
}

}  // namespace

Result<void> host_sizes(const WorkloadOptions &o, uint64_t &log_rate, uint64_t &log_file,
			uint64_t &weights)
{
	struct SizeOpt {
		const char *name;
		const std::string &text;
		uint64_t &out;
	};
	for (SizeOpt so : {SizeOpt{"--host-log-rate", o.host_log_rate, log_rate},
			   SizeOpt{"--host-log-file", o.host_log_file, log_file},
			   SizeOpt{"--host-weights", o.host_weights, weights}}) {
		auto v = placement::parse_size(so.text);
		if (!v)
			return usage(std::string(so.name) + ": " + v.error().message());
		so.out = *v;
	}
	return ok();
}

const std::vector<std::string> &evict_names()
{
	static const std::vector<std::string> names = {"lru", "fifo", "fifo2"};
	return names;
}

bool selects_chunk_store(const WorkloadOptions &o, std::string_view workload)
{
	return !o.kv_trace.empty() && workload != "host" && workload != "slots" &&
	       workload != "hicache" && workload != "mixed";
}

bool selects_workload(const WorkloadOptions &o, std::string_view workload)
{
	return !o.kv_trace.empty() || !o.blk_trace.empty() || workload == "kv" ||
	       workload == "host" || workload == "slots" || workload == "hicache" ||
	       workload == "mixed";
}

namespace {

// --workload slots: its workers from the --slot-* lists, its scale from the KV model.
Result<std::unique_ptr<sim::Workload>> make_slot_workload(const WorkloadOptions &o,
							  const WorkloadContext &ctx)
{
	if (!o.kv_trace.empty() || !o.blk_trace.empty())
		return usage(
			"--workload slots generates its own writes; drop --kv-trace / --blk-trace");
	SlotConfig cfg;
	auto ws = slot_workers(o);
	if (!ws)
		return std::move(ws).error();
	cfg.workers = std::move(*ws);
	auto chunk = chunk_bytes_for(o.kv_model, o.kv_scale);
	if (!chunk)
		return std::move(chunk).error();
	auto preset = find_preset(o.kv_model);
	cfg.scale = static_cast<double>(*chunk) /
		    static_cast<double>(preset->bytes_per_token * kMooncakeBlockTokens);
	cfg.utilisation = ctx.utilisation;
	cfg.seed = ctx.seed;
	cfg.measure_writes = o.slot_measure_writes;
	cfg.fill_writer = o.slot_fill_writer;
	cfg.static_tail = o.slot_static_tail;
	cfg.warmup_writes = o.slot_warmup;
	KVFDP_TRY(SlotWorkload::validate(cfg, ctx.capacity_bytes));
	return std::unique_ptr<sim::Workload>(std::make_unique<SlotWorkload>(std::move(cfg)));
}

// --kv-trace: the Mooncake trace replayed in each engine (--workload host), else through
// one chunk store.
Result<std::unique_ptr<sim::Workload>>
make_trace_workload(const WorkloadOptions &o, const WorkloadContext &ctx, uint64_t chunk)
{
	auto trace = load_mooncake(o.kv_trace, o.kv_requests);
	if (!trace)
		return std::move(trace).error();
	if (ctx.workload == "host") {
		auto h = host_config(o, chunk, ctx.utilisation);
		if (!h)
			return std::move(h).error();
		return std::unique_ptr<sim::Workload>(
			std::make_unique<HostWorkload>(std::move(*trace), *h));
	}
	ChunkStoreConfig cfg;
	cfg.chunk_bytes = chunk;
	cfg.utilisation = ctx.utilisation;
	cfg.promote_on_hit = o.kv_promote;
	cfg.evict = o.kv_evict == "fifo"    ? EvictPolicy::fifo
		    : o.kv_evict == "fifo2" ? EvictPolicy::fifo2
					    : EvictPolicy::lru;
	std::string name = o.kv_trace;
	if (auto slash = name.rfind('/'); slash != std::string::npos)
		name = name.substr(slash + 1);
	return std::unique_ptr<sim::Workload>(
		std::make_unique<ChunkStoreWorkload>(name, std::move(*trace), cfg));
}

// --workload kv: the synthetic KV workload from --kv-mix, --kv-lifetimes and --writes.
Result<std::unique_ptr<sim::Workload>>
make_synth_workload(const WorkloadOptions &o, const WorkloadContext &ctx, uint64_t chunk)
{
	KvSynthConfig cfg;
	cfg.chunk_bytes = chunk;
	cfg.utilisation = ctx.utilisation;
	cfg.seed = ctx.seed;
	if (!parse_triple(o.kv_mix, cfg.mix) || cfg.mix[0] + cfg.mix[1] + cfg.mix[2] <= 0)
		return usage("--kv-mix: want three shares like 0.05,0.35,0.60 (not all zero)");
	if (!parse_triple(o.kv_lifetimes, cfg.mean_life_s) || cfg.mean_life_s[0] <= 0 ||
	    cfg.mean_life_s[1] <= 0 || cfg.mean_life_s[2] <= 0)
		return usage("--kv-lifetimes: want three positive seconds like 43200,300,10");
	if (!(o.kv_drive_writes > 0 && o.kv_drive_writes <= 1000))
		return usage("--writes: want a number in (0, 1000]");
	cfg.drive_writes = o.kv_drive_writes;
	return std::unique_ptr<sim::Workload>(std::make_unique<KvSynthWorkload>(cfg));
}

}  // namespace

Result<std::unique_ptr<sim::Workload>> make_workload(const WorkloadOptions &o,
						     const WorkloadContext &ctx)
{
	if (ctx.workload == "host" && o.kv_trace.empty())
		return usage(
			"--workload host replays a Mooncake trace in each engine: pass --kv-trace FILE");
	if (ctx.workload == "host" && !o.blk_trace.empty())
		return usage("--workload host takes --kv-trace, not --blk-trace");
	if (ctx.workload == "slots")
		return make_slot_workload(o, ctx);
	if (ctx.workload == "hicache" || ctx.workload == "mixed")
		return make_mixed_host(o, ctx);
	int chosen = (!o.kv_trace.empty()) + (!o.blk_trace.empty()) + (ctx.workload == "kv");
	if (chosen > 1)
		return usage("choose one of --kv-trace, --blk-trace and --workload kv");
	if (chosen == 0)
		return usage("no KV workload chosen: pass --kv-trace FILE, --blk-trace FILE or "
			     "--workload kv");
	if (!(ctx.utilisation > 0 && ctx.utilisation <= 1))
		return usage("utilisation must be in (0, 1]");
	if (!o.blk_trace.empty()) {
		auto recs = load_blk_trace(o.blk_trace, ctx.capacity_bytes / kBlkTraceLbaSize);
		if (!recs)
			return std::move(recs).error();
		return std::unique_ptr<sim::Workload>(
			std::make_unique<BlkTraceWorkload>(o.blk_trace, std::move(*recs)));
	}
	auto chunk = chunk_bytes_for(o.kv_model, o.kv_scale);
	if (!chunk)
		return std::move(chunk).error();
	if (!o.kv_trace.empty())
		return make_trace_workload(o, ctx, *chunk);
	return make_synth_workload(o, ctx, *chunk);
}

}  // namespace kvfdp::workload
