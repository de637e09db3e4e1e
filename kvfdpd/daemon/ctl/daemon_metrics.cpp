// kvfdpd's exposition from a running State (docs/cli.md, Metrics).
#include "kvfdpd/daemon/ctl/daemon_metrics.hpp"

#include <chrono>

#include "nvme/emulated.hpp"
#include "proto/backend_kind.hpp"
#include "kvfdpd/daemon/ctl/member_view.hpp"
#include "proto/metrics.hpp"
#include "model/twin/report.hpp"

namespace kvfdp::daemon {

namespace {

// Everything but the device's own figures: a stripe's members and their pids are added by
// metrics_exposition from the RUH Status it reads for the RUH families.
proto::MetricsInput metrics_input(State &s)
{
	proto::MetricsInput m;
	m.counters = snapshot(s);
	auto p = current_policy(s);
	m.generation = p->generation;
	m.nruh = s.nruh;
	for (const nvme::Handle &h : s.handles)
		m.pids.push_back(h.pid);
	m.tagger_active = s.tagger.active();
	m.zero_copy = ublk::is_zero_copy(s.data_mode);
	const auto up = std::chrono::steady_clock::now() - s.started;
	m.uptime_s =
		static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(up).count());
	m.start_time_s = static_cast<uint64_t>(
		std::chrono::duration_cast<std::chrono::seconds>(s.started_wall.time_since_epoch())
			.count());
	m.recovered = s.recovered;
	return m;
}

}  // namespace

std::string metrics_exposition(State &s)
{
	proto::MetricsInput in = metrics_input(s);
	std::vector<proto::MetricFamily> dev;  // RUH Status and FDP statistics, after the counters
	if (const nvme::StripeDevice *sd = nvme::as_stripe(*s.device)) {
		// A stripe: the RUH and FDP statistics families per member (labels member, device);
		// sum by the other labels for the stripe's totals. One RUH Status read per member
		// gives both its RUH families and its pids in kvfdp_handle_bytes_total.
		const auto ms = sd->members();
		for (uint32_t m = 0; m < ms.size(); m++) {
			in.members.push_back(ms[m].path);
			std::vector<uint16_t> &pids = in.member_pids.emplace_back();
			std::vector<proto::MetricFamily> mf;
			if (s.nruh > 0)
				if (auto hs = ms[m].device->handles()) {
					for (const nvme::Handle &h : *hs)
						pids.push_back(h.pid);
					mf = proto::ruh_families(*hs, s.info.lba_size);
				}
			if (s.info.fdp_enabled)
				if (auto raw = ms[m].device->log_page(0x22))
					if (auto st = nvme::parse_fdp_stats(*raw)) {
						const nvme::DeviceInfo &mi = ms[m].device->info();
						const bool emulated =
							proto::backend_passthru_logs(mi.backend) &&
							nvme::controller_is_emulated(mi.path);
						merge_families(mf, proto::fdp_stats_families(
									   *st, emulated));
					}
			label_member(mf, m, ms[m].path);
			merge_families(dev, std::move(mf));
		}
	} else {
		if (s.nruh > 0)
			if (auto hs = s.device->handles())
				dev = proto::ruh_families(*hs, s.info.lba_size);
		if (s.info.fdp_enabled)
			if (auto raw = s.device->log_page(0x22))
				if (auto st = nvme::parse_fdp_stats(*raw)) {
					const bool emulated =
						proto::backend_passthru_logs(s.info.backend) &&
						nvme::controller_is_emulated(s.info.path);
					for (auto &f : proto::fdp_stats_families(*st, emulated))
						dev.push_back(std::move(f));
				}
	}
	std::vector<proto::MetricFamily> fams = proto::counter_families(in);
	for (auto &f : dev)
		fams.push_back(std::move(f));
	fams.push_back(proto::daemon_up_family(true));
	if (s.tagger.active())  // the tagger's bounded tables and writer identities (docs/bpf.md)
		for (auto &f : proto::tagger_bound_families(s.tagger.bounds()))
			fams.push_back(std::move(f));
	if (s.drive_relocations)  // the drive's Media Reallocated events (docs/twin.md)
		if (const auto d = s.drive_relocations->report(*s.device, in.counters))
			fams.push_back(proto::drive_handle_family(*d));
	std::string text = proto::render_metrics(fams);
	if (s.twin)  // kvfdp_twin_*: the live WAF twin (docs/twin.md)
		text += twin::metrics_text(s.twin->report());
	// --placement learned: kvfdp_learned_*, its per-key series last of all, as the control
	// socket's bounded reply is cut from the end (docs/control.md, metrics).
	if (s.learned)
		text += proto::render_metrics(
			proto::learned_families(s.learned->policy(s.tagger.writer_names())));
	return text;
}

}  // namespace kvfdp::daemon
