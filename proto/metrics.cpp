// The metric families and their Prometheus text rendering.
#include "proto/metrics.hpp"

#include <algorithm>
#include <cstdio>

#include "nvme/waf.hpp"
#include "placement/classes.hpp"
#include "proto/policy_reply.hpp"
#include "proto/twin_stats.hpp"
#include "proto/u128_json.hpp"

namespace kvfdp::proto {

using placement::class_name;

namespace {

std::string escape(const std::string &v)
{
	std::string s;
	for (char c : v) {
		if (c == '\\')
			s += "\\\\";
		else if (c == '"')
			s += "\\\"";
		else if (c == '\n')
			s += "\\n";
		else
			s += c;
	}
	return s;
}

MetricFamily family(const char *name, const char *type, const char *help)
{
	return {name, help, type, {}};
}

void add(MetricFamily &f, std::vector<std::pair<std::string, std::string>> labels, uint64_t v)
{
	f.samples.push_back({std::move(labels), std::to_string(v)});
}

std::string fixed(double v, int digits)
{
	char buf[48];
	std::snprintf(buf, sizeof buf, "%.*f", digits, v);
	return buf;
}

std::string g17(double v)
{
	char buf[64];
	std::snprintf(buf, sizeof buf, "%.17g", v);
	return buf;
}

}  // namespace

std::string render_metrics(const std::vector<MetricFamily> &families)
{
	std::string out;
	for (const auto &f : families) {
		out += "# HELP " + f.name + " " + f.help + "\n";
		out += "# TYPE " + f.name + " " + f.type + "\n";
		for (const auto &s : f.samples) {
			out += f.name;
			if (!s.labels.empty()) {
				out += "{";
				for (size_t i = 0; i < s.labels.size(); i++) {
					if (i)
						out += ",";
					out += s.labels[i].first + "=\"" +
					       escape(s.labels[i].second) + "\"";
				}
				out += "}";
			}
			out += " " + s.value + "\n";
		}
	}
	return out;
}

bool has_family(const std::string &text, const std::string &name)
{
	return text.find("# TYPE " + name + " ") != std::string::npos;
}

std::vector<MetricFamily> counter_families(const MetricsInput &m)
{
	const CounterSnapshot &c = m.counters;
	auto cls_bytes =
		family("kvfdp_class_bytes_total", "counter", "Bytes written per lifetime class.");
	auto cls_writes =
		family("kvfdp_class_writes_total", "counter", "Write requests per lifetime class.");
	for (unsigned i = 0; i < placement::kNumClasses; i++) {
		add(cls_bytes, {{"class", class_name(i)}}, c.class_bytes[i]);
		add(cls_writes, {{"class", class_name(i)}}, c.class_writes[i]);
	}
	auto handle_bytes = family("kvfdp_handle_bytes_total", "counter",
				   "Bytes written per placement handle.");
	const unsigned nh = m.nruh ? m.nruh : 1;
	if (m.members.size() > 1) {
		for (unsigned mb = 0; mb < m.members.size() && mb < nvme::kMaxStripeMembers; mb++)
			for (unsigned h = 0; h < nh && h < placement::kMaxHandles; h++) {
				std::vector<std::pair<std::string, std::string>> l = {
					{"handle", std::to_string(h)}};
				if (mb < m.member_pids.size() && h < m.member_pids[mb].size())
					l.emplace_back("pid", std::to_string(m.member_pids[mb][h]));
				l.emplace_back("member", std::to_string(mb));
				l.emplace_back("device", m.members[mb]);
				add(handle_bytes, std::move(l), c.member_handle_bytes[mb][h]);
			}
	} else {
		for (unsigned h = 0; h < nh && h < placement::kMaxHandles; h++) {
			std::vector<std::pair<std::string, std::string>> l = {
				{"handle", std::to_string(h)}};
			if (h < m.pids.size())
				l.emplace_back("pid", std::to_string(m.pids[h]));
			add(handle_bytes, std::move(l), c.handle_bytes[h]);
		}
	}
	auto io = family("kvfdp_io_total", "counter", "Requests served per operation.");
	add(io, {{"op", "read"}}, c.reads);
	add(io, {{"op", "write"}}, c.writes);
	add(io, {{"op", "flush"}}, c.flushes);
	add(io, {{"op", "discard"}}, c.discards);
	add(io, {{"op", "write_zeroes"}}, c.write_zeroes);
	auto io_bytes = family("kvfdp_io_bytes_total", "counter", "Bytes per operation.");
	add(io_bytes, {{"op", "read"}}, c.read_bytes);
	add(io_bytes, {{"op", "write"}}, c.write_bytes);
	add(io_bytes, {{"op", "discard"}}, c.discard_bytes);
	add(io_bytes, {{"op", "write_zeroes"}}, c.write_zeroes_bytes);
	auto stale = family("kvfdp_stale_tags_total", "counter",
			    "Writes whose tag slot did not match (placed as not_set).");
	add(stale, {}, c.stale_tags);
	auto errors =
		family("kvfdp_io_errors_total", "counter", "Requests completed with an error.");
	add(errors, {}, c.errors);
	auto copied = family(
		"kvfdp_copied_bytes_total", "counter",
		"Read/write bytes copied between requests' pages and kvfdpd's buffers (0 in zero-copy mode).");
	add(copied, {}, c.copied_bytes);
	auto zc = family(
		"kvfdp_zero_copy", "gauge",
		"1 when requests reach the device from their own pages (UBLK_F_AUTO_BUF_REG or UBLK_F_SUPPORT_ZERO_COPY).");
	add(zc, {}, m.zero_copy ? 1 : 0);
	auto tagger = family(
		"kvfdp_tagger_active", "gauge",
		"1 when the BPF tagger classifies requests; 0 when kvfdpd serves DEGRADED, every write on "
		"the default handle.");
	add(tagger, {}, m.tagger_active ? 1 : 0);
	auto gen = family("kvfdp_policy_generation", "gauge", "Policy reload generation.");
	add(gen, {}, m.generation);
	auto up = family("kvfdp_uptime_seconds", "gauge", "Seconds since kvfdpd started.");
	add(up, {}, m.uptime_s);
	auto start = family("kvfdp_start_time_seconds", "gauge",
			    "Unix time this kvfdpd started; changes(...) counts restarts.");
	add(start, {}, m.start_time_s);
	auto rec = family("kvfdp_recovered", "gauge",
			  "1 when this kvfdpd re-attached to a disk a previous one left.");
	add(rec, {}, m.recovered ? 1 : 0);
	return {cls_bytes, cls_writes, handle_bytes, io,  io_bytes, stale, errors,
		copied,    zc,         tagger,       gen, up,       start, rec};
}

std::string format_metrics(const MetricsInput &m)
{
	return render_metrics(counter_families(m));
}

std::vector<MetricFamily> ruh_families(const std::vector<nvme::Handle> &handles, uint32_t lba_size)
{
	auto lbas = family(
		"kvfdp_ruh_ruamw_lbas", "gauge",
		"Reclaim unit available media writes of the handle's current RU, in logical blocks (RUH Status).");
	auto bytes =
		family("kvfdp_ruh_ruamw_bytes", "gauge",
		       "Reclaim unit available media writes of the handle's current RU, in bytes.");
	auto earutr = family("kvfdp_ruh_earutr_seconds", "gauge",
			     "Estimated active reclaim unit time remaining (RUH Status EARUTR).");
	for (const nvme::Handle &h : handles) {
		const std::vector<std::pair<std::string, std::string>> l = {
			{"handle", std::to_string(h.index)},
			{"pid", std::to_string(h.pid)},
			{"ruhid", std::to_string(h.ruhid)}};
		add(lbas, l, h.ruamw);
		bytes.samples.push_back(
			{l, u128_text(static_cast<nvme::u128>(h.ruamw) * lba_size)});
		add(earutr, l, h.earutr);
	}
	return {lbas, bytes, earutr};
}

std::vector<MetricFamily> fdp_stats_families(const nvme::FdpStats &s, bool emulated)
{
	std::vector<MetricFamily> f = {
		{"kvfdp_fdp_hbmw_bytes",
		 "Host bytes with metadata written (FDP statistics log 0x22).",
		 "counter",
		 {{{}, u128_text(s.hbmw)}}},
		{"kvfdp_fdp_mbmw_bytes",
		 "Media bytes with metadata written (FDP statistics log 0x22).",
		 "counter",
		 {{{}, u128_text(s.mbmw)}}},
		{"kvfdp_fdp_mbe_bytes",
		 "Media bytes erased (FDP statistics log 0x22).",
		 "counter",
		 {{{}, u128_text(s.mbe)}}}};
	const nvme::WafReading w = nvme::assess_waf(nvme::FdpStats{}, s, emulated);
	if (w.waf) {
		char buf[32];
		std::snprintf(buf, sizeof buf, "%.6g", *w.waf);
		f.push_back({"kvfdp_fdp_waf",
			     "Lifetime write amplification MBMW / HBMW; for an interval use "
			     "rate(kvfdp_fdp_mbmw_bytes) / rate(kvfdp_fdp_hbmw_bytes).",
			     "gauge",
			     {{{}, buf}}});
	}
	return f;
}

MetricFamily daemon_up_family(bool up)
{
	return {"kvfdp_daemon_up",
		"1 when kvfdpd answered (on its control socket, or this scrape of its /metrics).",
		"gauge",
		{{{}, up ? "1" : "0"}}};
}

std::vector<MetricFamily> twin_families(const TwinStats &t)
{
	auto waf = family(
		"kvfdp_twin_waf", "gauge",
		"Projected WAF since kvfdpd started, by the live twin: with kvfdpd's placement, and with none (0 until written).");
	waf.samples.push_back({{{"placement", "placed"}}, fixed(t.placed.waf.value_or(0), 6)});
	waf.samples.push_back({{{"placement", "none"}}, fixed(t.none.waf.value_or(0), 6)});
	auto host = family("kvfdp_twin_host_bytes_total", "counter",
			   "Projected host bytes written, the twin's input.");
	add(host, {}, t.host_bytes);
	auto media = family("kvfdp_twin_media_bytes_total", "counter",
			    "Projected media bytes written (host and GC), by placement.");
	add(media, {{"placement", "placed"}}, t.placed.media_bytes);
	add(media, {{"placement", "none"}}, t.none.media_bytes);
	auto saved = family("kvfdp_twin_saved_bytes", "gauge",
			    "Projected media bytes placement saved the drive (none minus placed).");
	saved.samples.push_back({{}, std::to_string(t.saved_bytes)});
	auto records =
		family("kvfdp_twin_records_total", "counter", "I/O records the twin applied.");
	add(records, {}, t.records);
	auto dropped = family("kvfdp_twin_dropped_total", "counter",
			      "I/O records the twin lost to a full ring (never blocks I/O).");
	add(dropped, {}, t.dropped);
	auto rate = family("kvfdp_twin_sample_rate", "gauge",
			   "Fraction of the LBA space (and of each RU) the twin models.");
	rate.samples.push_back({{}, fixed(t.rate, 9)});
	auto memory = family("kvfdp_twin_memory_bytes", "gauge",
			     "Memory of the twin's two models and its rings.");
	add(memory, {}, t.memory_bytes);
	auto h_host =
		family("kvfdp_twin_handle_host_bytes_total", "counter",
		       "Projected host bytes the twin's placed copy wrote through each handle.");
	auto h_reloc = family(
		"kvfdp_twin_handle_relocated_bytes_total", "counter",
		"Projected bytes the twin's GC relocated out of each handle's reclaim units (a noisy handle's "
		"dominate: docs/twin.md, Noisy handles).");
	for (const TwinHandle &h : t.handles) {
		add(h_host, {{"handle", std::to_string(h.handle)}}, h.host_bytes);
		add(h_reloc, {{"handle", std::to_string(h.handle)}}, h.relocated_bytes);
	}
	return {waf, host, media, saved, records, dropped, rate, memory, h_host, h_reloc};
}

MetricFamily drive_handle_family(const std::vector<TwinHandle> &handles)
{
	auto f = family(
		"kvfdp_drive_handle_relocated_bytes_total", "counter",
		"Bytes the drive reports it relocated out of each handle's reclaim units (FDP events log "
		"0x23, Media Reallocated; docs/twin.md, Noisy handles).");
	for (const TwinHandle &h : handles)
		add(f, {{"handle", std::to_string(h.handle)}}, h.relocated_bytes);
	return f;
}

std::vector<MetricFamily> learned_families(const LearnedPolicy &l)
{
	auto life_bytes =
		family("kvfdp_learned_lifetime_bytes", "gauge",
		       "Estimated lifetime of a placement key's data, in device bytes written.");
	auto life_s = family("kvfdp_learned_lifetime_seconds", "gauge",
			     "The same lifetime in seconds at the recent write rate (0: unknown).");
	auto share = family("kvfdp_learned_write_share", "gauge",
			    "Decayed share of the device's writes.");
	auto live = family("kvfdp_learned_live_bytes", "gauge",
			   "Bytes written under the key and not yet died.");
	for (const LearnedKey &k : l.keys) {
		std::string writer = k.writer.value_or("");
		writer.erase(std::remove(writer.begin(), writer.end(), '\n'), writer.end());
		const std::vector<std::pair<std::string, std::string>> labels = {
			{"writer", writer}, {"class", k.cls}, {"handle", std::to_string(k.handle)}};
		life_bytes.samples.push_back({labels, g17(k.lifetime_bytes)});
		life_s.samples.push_back({labels, g17(k.lifetime_s)});
		share.samples.push_back({labels, g17(k.write_share)});
		live.samples.push_back({labels, g17(static_cast<double>(k.live_bytes))});
	}
	auto groups =
		family("kvfdp_learned_groups", "gauge", "Groups (handles the learner places on).");
	groups.samples.push_back({{}, g17(l.groups)});
	auto by_class = family("kvfdp_learned_grouping_by_class", "gauge",
			       "1 while the learner groups by class: most writes come from writers "
			       "replaced faster than they are measured.");
	by_class.samples.push_back({{}, l.grouping == kGroupingByClass ? "1" : "0"});
	auto updates = family("kvfdp_ruh_updates_total", "counter",
			      "Handles closed with RUH Update since start.");
	updates.samples.push_back({{}, g17(static_cast<double>(l.ruh_updates))});
	auto refused = family("kvfdp_ruh_update_refused_total", "counter",
			      "Handles whose RUH Update the drive refused (left open).");
	refused.samples.push_back({{}, g17(static_cast<double>(l.ruh_update_refused))});
	auto keys = family("kvfdp_learned_keys", "gauge",
			   "Keys the learner's table holds (at most kvfdp_learned_max_keys).");
	keys.samples.push_back({{}, g17(l.key_count)});
	auto max_keys = family("kvfdp_learned_max_keys", "gauge", "The learner's table's bound.");
	max_keys.samples.push_back({{}, g17(l.max_keys)});
	auto retired = family("kvfdp_learned_retired_keys_total", "counter",
			      "Keys retired since start (idle for capacities of device writes).");
	retired.samples.push_back({{}, g17(static_cast<double>(l.retired_keys))});
	auto overflow = family("kvfdp_learned_overflow_bytes_total", "counter",
			       "Bytes written while the learner's table was full (on the base "
			       "handle, unlearned).");
	overflow.samples.push_back({{}, g17(static_cast<double>(l.overflow_bytes))});
	// The per-key families last: they grow with the keys, and a bounded reply is cut from
	// its end (docs/control.md, metrics).
	return {groups,  by_class, updates,    refused, keys,  max_keys,
		retired, overflow, life_bytes, life_s,  share, live};
}

std::vector<MetricFamily> tagger_bound_families(const TaggerBounds &b)
{
	auto entries = family("kvfdp_tagger_table_entries", "gauge",
			      "Entries of a bounded tagger table (BPF maps: added - removed).");
	auto limit = family("kvfdp_tagger_table_limit", "gauge", "A tagger table's bound.");
	auto evicted = family("kvfdp_tagger_table_evictions_total", "counter",
			      "Entries a tagger table dropped to stay within its bound (BPF LRU "
			      "maps: at least).");
	auto failed =
		family("kvfdp_tagger_table_failed_inserts_total", "counter",
		       "Inserts into a tagger BPF map that failed (a rule or writer not applied).");
	for (const TableBound &t : b.tables) {
		add(entries, {{"table", t.table}}, t.entries);
		add(limit, {{"table", t.table}}, t.limit);
		add(evicted, {{"table", t.table}}, t.evictions);
		add(failed, {{"table", t.table}}, t.failed);
	}
	auto ids = family("kvfdp_writer_identities_total", "counter",
			  "Writer identities: (cgroup, directory) pairs resolved (by_pattern: by a "
			  "[[writer]] cgroup_pattern), raw ids left unresolved, files rewritten, "
			  "creates given their writer directory's id provisionally (right: "
			  "confirmed, wrong: rewritten).");
	add(ids, {{"result", "resolved"}}, b.identities_resolved);
	add(ids, {{"result", "by_pattern"}}, b.identities_by_pattern);
	add(ids, {{"result", "unresolved"}}, b.identities_unresolved);
	add(ids, {{"result", "rewritten"}}, b.identities_rewritten);
	add(ids, {{"result", "provisional"}}, b.identities_provisional);
	add(ids, {{"result", "provisional_right"}}, b.identities_provisional_right);
	add(ids, {{"result", "provisional_wrong"}}, b.identities_provisional_wrong);
	auto early =
		family("kvfdp_writer_identity_early_bytes_total", "counter",
		       "Bytes new files wrote under their raw cgroup id or a wrong provisional "
		       "id before their identity was applied (at least).");
	add(early, {}, b.identity_early_bytes);
	auto renames = family("kvfdp_tagger_renames_over_total", "counter",
			      "Renames onto an existing file the tagger saw (kprobe/vfs_rename).");
	add(renames, {}, b.renames_over);
	auto requests = family("kvfdp_tagger_requests_total", "counter",
			       "Write, discard and write-zeroes requests the tagger classified on "
			       "watched disks.");
	add(requests, {}, b.requests);
	auto missed = family("kvfdp_tagger_missed_runs_total", "counter",
			     "Block requests the kernel issued without running the tagger (BPF "
			     "recursion protection); a write among them is placed as not_set.");
	add(missed, {}, b.missed_runs);
	return {entries, limit, evicted, failed, ids, early, renames, requests, missed};
}

}  // namespace kvfdp::proto
