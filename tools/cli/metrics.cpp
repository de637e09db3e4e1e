// The CLI's inputs to the shared metric families.
#include "tools/cli/metrics.hpp"

namespace kvfdp::cli {

namespace {

uint64_t u64(const nlohmann::json &j, const char *k)
{
	if (j.is_object() && j.contains(k) && j[k].is_number_unsigned())
		return j[k].get<uint64_t>();
	if (j.is_object() && j.contains(k) && j[k].is_number_integer() && j[k].get<int64_t>() >= 0)
		return static_cast<uint64_t>(j[k].get<int64_t>());
	return 0;
}

} // namespace

std::vector<MetricFamily> ruh_metrics(const RuhView &v)
{
	std::vector<nvme::Handle> hs;
	for (const auto &r : v.rows) {
		nvme::Handle h;
		h.index = r.index;
		h.pid = r.pid;
		h.ruhid = r.ruhid;
		h.earutr = r.earutr;
		h.ruamw = r.ruamw;
		hs.push_back(h);
	}
	return daemon::ruh_families(hs, v.lba_size);
}

std::vector<MetricFamily> fdp_stats_metrics(const nvme::FdpStats &s, bool emulated)
{
	return daemon::fdp_stats_families(s, emulated);
}

std::vector<MetricFamily> status_metrics(const nlohmann::json &st)
{
	daemon::MetricsInput m;
	if (st.contains("classes") && st["classes"].is_array())
		for (const auto &c : st["classes"]) {
			auto cls = daemon::parse_class(c.value("class", std::string()));
			if (!cls)
				continue;
			m.counters.class_bytes[*cls] = u64(c, "bytes");
			m.counters.class_writes[*cls] = u64(c, "writes");
		}
	m.counters.stale_tags = u64(st, "stale_tags");
	// kvfdp_tagger_active (0: DEGRADED, the alert's gauge) only from a reply that says.
	const bool tagging = st.contains("tagging") && st["tagging"].is_object() && st["tagging"].contains("active");
	m.tagger_active = tagging && st["tagging"].value("active", false);
	std::vector<MetricFamily> out;
	for (auto &f : daemon::counter_families(m))
		if (f.name == "kvfdp_class_bytes_total" || f.name == "kvfdp_class_writes_total" ||
		    f.name == "kvfdp_stale_tags_total" || (tagging && f.name == "kvfdp_tagger_active"))
			out.push_back(std::move(f));
	return out;
}

} // namespace kvfdp::cli
