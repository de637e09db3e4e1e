// kvfdpd's exposition from a running State (docs/cli.md, Metrics).
#include "userspace/daemon/daemon_metrics.hpp"

#include <chrono>

#include "nvme/waf.hpp"
#include "userspace/daemon/metrics.hpp"

namespace kvfdp::daemon {

namespace {

MetricsInput metrics_input(State &s)
{
	MetricsInput m;
	m.counters = snapshot(s);
	auto p = current_policy(s);
	m.generation = p->generation;
	m.nruh = s.nruh;
	for (const nvme::Handle &h : s.handles)
		m.pids.push_back(h.pid);
	m.tagger_active = s.tagger.active();
	m.zero_copy = ublk::is_zero_copy(s.data_mode);
	const auto up = std::chrono::steady_clock::now() - s.started;
	m.uptime_s = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(up).count());
	m.start_time_s = static_cast<uint64_t>(
		std::chrono::duration_cast<std::chrono::seconds>(s.started_wall.time_since_epoch()).count());
	m.recovered = s.recovered;
	return m;
}

} // namespace

std::string metrics_exposition(State &s)
{
	std::vector<MetricFamily> fams = counter_families(metrics_input(s));
	if (s.nruh > 0)
		if (auto hs = s.device->handles())
			for (auto &f : ruh_families(*hs, s.info.lba_size))
				fams.push_back(std::move(f));
	if (s.info.fdp_enabled)
		if (auto raw = s.device->log_page(0x22))
			if (auto st = nvme::parse_fdp_stats(*raw)) {
				const bool emulated = s.info.backend == "passthru" && nvme::controller_is_emulated(s.info.path);
				for (auto &f : fdp_stats_families(*st, emulated))
					fams.push_back(std::move(f));
			}
	fams.push_back(daemon_up_family(true));
	std::string text = render_metrics(fams);
	if (s.learned)  // --placement learned: kvfdp_learned_* per key (learned.hpp)
		text += s.learned->metrics_text(s.tagger.writer_names());
	return text;
}

} // namespace kvfdp::daemon
