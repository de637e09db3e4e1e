// run_one: a workload replayed into a fresh model; reports as JSON and as a table.
#include "model/sim/simulate.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>

#include "placement/handle_map.hpp"
#include "model/sim/placer.hpp"

namespace kvfdp::sim {
namespace {

// Feeds a workload's block operations to the model through a Placer; remembers the first
// model error.
class ModelSink final : public BlockSink {
public:
	ModelSink(model::Ftl &ftl, Placement placement, const PlacerOptions &learner)
	    : ftl_(ftl), placer_(placement, ftl, learner), handle_bytes_(ftl.handles(), 0)
	{
	}
	void write(uint64_t slba, uint64_t nlb, uint8_t rw_class, uint64_t writer) override
	{
		if (err_)
			return;
		const uint32_t h = placer_.write(slba, nlb, rw_class, writer);
		err_ = ftl_.write(h, slba, nlb);
		if (err_)
			err_lba_ = slba;
		else
			handle_bytes_[h] += nlb * ftl_.config().lba_size;
	}
	void deallocate(uint64_t slba, uint64_t nlb) override
	{
		if (err_)
			return;
		placer_.deallocate(slba, nlb);
		err_ = ftl_.deallocate(slba, nlb);
		if (err_)
			err_lba_ = slba;
	}
	void begin_measurement() override { mark_ = ftl_.stats(); }

	[[nodiscard]] int error() const { return err_; }
	[[nodiscard]] uint64_t error_lba() const { return err_lba_; }
	[[nodiscard]] const model::Stats &mark() const { return mark_; }
	[[nodiscard]] const Placer &placer() const { return placer_; }
	// Host bytes written through each handle over the whole run.
	[[nodiscard]] const std::vector<uint64_t> &handle_bytes() const { return handle_bytes_; }

private:
	model::Ftl &ftl_;
	Placer placer_;
	int err_ = 0;
	uint64_t err_lba_ = 0;
	model::Stats mark_;
	std::vector<uint64_t> handle_bytes_;
};

}  // namespace

std::string iec(uint64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = static_cast<double>(bytes);
	int u = 0;
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	char buf[32];
	if (u == 0)
		std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
	else
		std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
	return buf;
}

const char *placement_name(Placement p)
{
	switch (p) {
	case Placement::none: return "none";
	case Placement::hint: return "hint";
	case Placement::oracle: return "oracle";
	case Placement::writer: return "writer";
	case Placement::learned: return "learned";
	}
	return "?";
}

std::optional<Placement> parse_placement(std::string_view s)
{
	if (s == "none")
		return Placement::none;
	if (s == "hint")
		return Placement::hint;
	if (s == "oracle")
		return Placement::oracle;
	if (s == "writer")
		return Placement::writer;
	if (s == "learned")
		return Placement::learned;
	return std::nullopt;
}

std::vector<Placement> runnable_placements(const Workload &w)
{
	std::vector<Placement> out;
	for (Placement p : w.placements()) {
		if (p == Placement::oracle || p == Placement::writer || p == Placement::learned)
			continue;
		out.push_back(p);
		if (p == Placement::hint) {
			out.push_back(Placement::writer);
			out.push_back(Placement::learned);
		}
	}
	for (Placement p : w.placements())
		if (p == Placement::oracle)
			out.push_back(p);
	return out;
}

uint32_t default_handle_for_class(uint8_t rw_class, uint32_t nhandles)
{
	const auto n = static_cast<uint16_t>(std::min<uint32_t>(nhandles, placement::kMaxHandles));
	return placement::default_handle(rw_class, n);
}

Result<RunReport> run_one(const model::ModelConfig &cfg, Workload &workload, Placement placement,
			  Progress *progress, const PlacerOptions &learner)
{
	auto ftl = model::Ftl::create(cfg);
	if (!ftl)
		return std::move(ftl).error();
	ModelSink sink(**ftl, placement, learner);
	// writer and learned place the hint classes (and writers) themselves.
	const Placement classify = placement == Placement::writer || placement == Placement::learned
					   ? Placement::hint
					   : placement;
	const auto t0 = std::chrono::steady_clock::now();
	KVFDP_TRY(workload.run(classify, (*ftl)->logical_lbas(), cfg.lba_size, sink, progress));
	const auto t1 = std::chrono::steady_clock::now();
	if (sink.error())
		return errno_error(
			sink.error(),
			"model: " + workload.name() + " write at LBA " +
				std::to_string(sink.error_lba()) +
				(sink.error() == -ENOSPC
					 ? " found no reclaimable space (raise --op or lower --util)"
					 : ""));
	RunReport r;
	r.placement = placement_name(placement);
	r.workload = workload.name();
	r.total = (*ftl)->stats();
	const model::Stats d = r.total.since(sink.mark());
	r.host_bytes = d.host_bytes;
	r.media_bytes = d.media_bytes;
	r.waf = d.waf();
	r.gc_runs = d.gc_runs;
	r.relocated_bytes = d.relocated_bytes;
	r.erased_bytes = d.erased_bytes;
	r.seconds = std::chrono::duration<double>(t1 - t0).count();
	r.extra = workload.extra();
	if (!r.extra.is_object())
		r.extra = nlohmann::json::object();
	// The model's handles at the end of the run, in RUH Status order (nvme-cli key names).
	nlohmann::json ruhss = nlohmann::json::array();
	for (uint32_t h = 0; h < (*ftl)->handles(); h++)
		ruhss.push_back({{"index", h},
				 {"rg", h / cfg.nruh},
				 {"ruhid", h % cfg.nruh},
				 {"ruamw", (*ftl)->ruamw(h)},
				 {"used", (*ftl)->handle_used(h)},
				 {"host_bytes", sink.handle_bytes()[h]},
				 {"placed", h < cfg.nruh ? sink.placer().describe_handle(h)
							 : std::string("-")}});
	r.extra["ruhss"] = std::move(ruhss);
	const nlohmann::json placed = sink.placer().report();
	for (auto it = placed.begin(); it != placed.end(); ++it)
		r.extra[it.key()] = it.value();
	return r;
}

nlohmann::ordered_json runs_to_json(const std::vector<RunReport> &runs)
{
	nlohmann::ordered_json arr = nlohmann::ordered_json::array();
	for (const RunReport &r : runs) {
		nlohmann::ordered_json j;
		j["placement"] = r.placement;
		j["host_bytes"] = r.host_bytes;
		j["media_bytes"] = r.media_bytes;
		// No bytes written in the measured part: there is no WAF (null, "n/a" in the table).
		j["waf"] = r.host_bytes ? nlohmann::ordered_json(r.waf)
					: nlohmann::ordered_json(nullptr);
		j["gc_runs"] = r.gc_runs;
		j["relocated_bytes"] = r.relocated_bytes;
		j["workload"] = r.workload;
		j["erased_bytes"] = r.erased_bytes;
		j["total_host_bytes"] = r.total.host_bytes;
		j["total_media_bytes"] = r.total.media_bytes;
		j["seconds"] = r.seconds;
		if (r.extra.is_object()) {
			for (auto it = r.extra.begin(); it != r.extra.end(); ++it)
				j[it.key()] = it.value();
		}
		arr.push_back(std::move(j));
	}
	nlohmann::ordered_json out;
	out["runs"] = std::move(arr);
	return out;
}

std::string runs_to_table(const std::vector<RunReport> &runs)
{
	std::string out;
	char line[256];
	// Cache workloads (the KV chunk store) add their hit ratio and evictions.
	const bool cache =
		!runs.empty() && runs[0].extra.is_object() && runs[0].extra.contains("hit_ratio");
	std::snprintf(line, sizeof line, "%-10s %14s %14s %7s %10s %16s", "PLACEMENT", "HOST BYTES",
		      "MEDIA BYTES", "WAF", "GC RUNS", "RELOCATED BYTES");
	out += line;
	out += cache ? "  HIT RATIO  EVICTIONS\n" : "\n";
	for (const RunReport &r : runs) {
		char waf[16];
		if (r.host_bytes)
			std::snprintf(waf, sizeof waf, "%.3f", r.waf);
		else
			std::snprintf(waf, sizeof waf, "n/a");
		std::snprintf(
			line, sizeof line, "%-10s %14s %14s %7s %10llu %16s", r.placement.c_str(),
			iec(r.host_bytes).c_str(), iec(r.media_bytes).c_str(), waf,
			static_cast<unsigned long long>(r.gc_runs), iec(r.relocated_bytes).c_str());
		out += line;
		if (cache) {
			const auto &x = r.extra;
			std::snprintf(
				line, sizeof line, "  %9.3f %10llu", x.value("hit_ratio", 0.0),
				static_cast<unsigned long long>(x.value("evictions", uint64_t{0})));
			out += line;
		}
		out += "\n";
	}
	out += "bytes, WAF and GC runs: the measured part of each run, after its warm-up "
	       "(-o json adds total_host_bytes, total_media_bytes)\n";
	for (const RunReport &r : runs)
		if (!r.host_bytes) {
			out += "WAF n/a: the measured part wrote no bytes (a longer run, or a trace with "
			       "writes after its warm-up, gives one)\n";
			break;
		}
	return out;
}

}  // namespace kvfdp::sim
