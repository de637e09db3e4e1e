// WindowSource: the twin's window replayed on its sampled model at each utilisation.
#include "model/sim/window_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/sim/model_args.hpp"

namespace kvfdp::sim {

namespace {

// v as %g: a rate, an OP, a utilisation.
std::string g_word(double v)
{
	char b[40];
	std::snprintf(b, sizeof b, "%.9g", v);
	return b;
}

// ms as seconds with one decimal: "1.5 s".
std::string seconds(uint64_t ms)
{
	char b[40];
	std::snprintf(b, sizeof b, "%.1f s", static_cast<double>(ms) / 1000);
	return b;
}

uint64_t written_lbas(const proto::TwinWindow &w)
{
	uint64_t n = 0;
	for (const proto::TwinWindowRecord &r : w.records)
		n += r.op == proto::TwinWindowOp::write ? r.nlb : 0;
	return n;
}

}  // namespace

WindowWorkload::WindowWorkload(proto::TwinWindow w) : w_(std::move(w))
{
	traced_lbas_ = w_.model.lba_size ? w_.model.logical_bytes / w_.model.lba_size : 0;
	const uint64_t per_pass = written_lbas(w_);
	if (per_pass)
		passes_ = static_cast<uint32_t>(std::clamp<uint64_t>(
			(traced_lbas_ + per_pass - 1) / per_pass, 1, kMaxWindowPasses));
}

Result<void> WindowWorkload::run(Placement placement, uint64_t logical_lbas, uint32_t lba_size,
				 BlockSink &sink, Progress *progress)
{
	(void)placement;  // every class is 0: none and hint are the same run
	if (lba_size != w_.model.lba_size || logical_lbas < traced_lbas_)
		return guidance_error(
			std::errc::invalid_argument,
			"the twin's window replays on its own sampled model only (LBA size " +
				std::to_string(w_.model.lba_size) + ")");
	const uint64_t chunk = std::max<uint64_t>(1, w_.model.ru_size / lba_size);
	for (uint64_t lba = 0; lba < traced_lbas_; lba += chunk)
		sink.write(lba, std::min(chunk, traced_lbas_ - lba), 0,
			   1);  // the data the drive holds
	sink.begin_measurement();
	const size_t n = w_.records.size();
	for (uint32_t p = 0; p < passes_; p++) {
		for (size_t i = 0; i < n; i++) {
			const proto::TwinWindowRecord &r = w_.records[i];
			const uint64_t end = std::min<uint64_t>(r.lba + r.nlb, traced_lbas_);
			if (r.lba >= end)
				continue;
			if (r.op == proto::TwinWindowOp::write)
				sink.write(r.lba, end - r.lba, 0, uint64_t{r.handle} + 1);
			else
				sink.deallocate(r.lba, end - r.lba);
		}
		if (progress)
			progress->update(static_cast<double>(p + 1) / passes_);
	}
	return ok();
}

std::string window_refusal(const proto::TwinWindow &w)
{
	if (w.records.empty())
		return "the twin's window is empty: kvfdpd has fed its twin nothing since it started; let the "
		       "workload write for a while and ask again";
	if (!written_lbas(w))
		return "the twin's window holds " + std::to_string(w.records.size()) +
		       " trims and no writes: nothing to project; let the workload write for a while and ask again";
	auto c = window_model_at(w, 1);
	if (auto v = model::validate(c); !v)
		return "the twin's sampled model is refused (" + v.error().message() +
		       "); is this a kvfdpd window?";
	return "";
}

model::ModelConfig window_model_at(const proto::TwinWindow &w, double util)
{
	model::ModelConfig c;
	c.lba_size = w.model.lba_size;
	c.mapping_unit = w.model.mapping_unit;
	c.ru_size = w.model.ru_size;
	c.nrg = 1;
	c.nruh = std::max<uint16_t>(1, w.model.handles);
	c.op = w.model.op;
	if (auto gc = model::parse_gc_policy(w.model.gc))
		c.gc = *gc;
	const uint64_t mu = std::max<uint32_t>(1, c.mapping_unit);
	const auto units = static_cast<uint64_t>(std::ceil(
		static_cast<double>(w.model.logical_bytes) / util / static_cast<double>(mu) -
		1e-9));
	c.logical_bytes = units * mu;
	return c;
}

WindowSource::WindowSource(proto::TwinWindow w, std::string saved, std::string target)
    : workload_(std::move(w)), saved_(std::move(saved)), target_(std::move(target))
{
}

std::vector<Placement> WindowSource::placements() const
{
	return {Placement::none, Placement::writer, Placement::learned};
}

Result<RunReport> WindowSource::run(const AdviseSetting &s)
{
	char label[96];
	std::snprintf(label, sizeof label, "advise twin window/%s util=%g",
		      placement_name(s.placement), s.util);
	std::unique_ptr<TtyProgress> bar = tty_progress(label);
	return run_one(window_model_at(workload_.window(), s.util), workload_, s.placement,
		       bar.get());
}

std::string WindowSource::simulate_command(const AdviseSetting &s) const
{
	if (saved_.empty())
		return {};
	const std::string u = util_word(s.util);
	return "kvfdp advise --window " + saved_ + " --target " + target_ + " --sweep util=" + u +
	       ":" + u + ":0.05 --placement " + placement_name(s.placement);
}

std::string WindowSource::util_note() const
{
	const proto::TwinWindow &w = workload_.window();
	std::string out = "from kvfdpd's twin: its sampled window of " +
			  std::to_string(w.records.size()) + " records (" +
			  std::to_string(w.total) + " ever, at most " + std::to_string(w.capacity) +
			  ") over " + seconds(w.span_ms) + ", ending " + seconds(w.age_ms) +
			  " ago; rate " + g_word(w.rate) + " of the LBA space and of each RU\n";
	out += "UTIL: the sampled model's " + iec(w.model.logical_bytes) + " (RUs of " +
	       iec(w.model.ru_size) + ", OP " + g_word(w.model.op) +
	       ") filled once, then the window replayed " + std::to_string(workload_.passes()) +
	       (workload_.passes() == 1 ? " time" : " times") +
	       ", on a drive of that over UTIL; writer: each write on the handle kvfdpd placed it on";
	if (saved_.empty())
		out += "\nsave the window with --save-window FILE to rerun this advice (kvfdp advise --window FILE)";
	return out;
}

nlohmann::ordered_json WindowSource::source_json() const
{
	const proto::TwinWindow &w = workload_.window();
	nlohmann::ordered_json j;
	j["kind"] = "twin_window";
	j["rate"] = w.rate;
	j["records"] = w.records.size();
	j["total"] = w.total;
	j["capacity"] = w.capacity;
	j["span_ms"] = w.span_ms;
	j["age_ms"] = w.age_ms;
	j["dropped"] = w.dropped;
	j["passes"] = workload_.passes();
	j["model"] = nlohmann::json(w.model);
	j["file"] =
		saved_.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(saved_);
	return j;
}

}  // namespace kvfdp::sim
