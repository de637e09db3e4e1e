// Prometheus text rendering and the kvfdp metric families.
#include "tools/cli/metrics.hpp"

#include <cstdio>

#include "tools/cli/units.hpp"
#include "tools/cli/waf.hpp"

namespace kvfdp::cli {

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

uint64_t u64(const nlohmann::json &j, const char *k)
{
	if (j.is_object() && j.contains(k) && j[k].is_number_unsigned())
		return j[k].get<uint64_t>();
	if (j.is_object() && j.contains(k) && j[k].is_number_integer() && j[k].get<int64_t>() >= 0)
		return static_cast<uint64_t>(j[k].get<int64_t>());
	return 0;
}

} // namespace

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
					out += s.labels[i].first + "=\"" + escape(s.labels[i].second) + "\"";
				}
				out += "}";
			}
			out += " " + s.value + "\n";
		}
	}
	return out;
}

std::vector<MetricFamily> ruh_metrics(const RuhView &v)
{
	MetricFamily lbas{"kvfdp_ruh_ruamw_lbas",
			  "Reclaim unit available media writes of the handle's current RU, in logical blocks (RUH Status).",
			  "gauge", {}};
	MetricFamily bytes{"kvfdp_ruh_ruamw_bytes",
			   "Reclaim unit available media writes of the handle's current RU, in bytes.", "gauge", {}};
	MetricFamily earutr{"kvfdp_ruh_earutr_seconds",
			    "Estimated active reclaim unit time remaining (RUH Status EARUTR).", "gauge", {}};
	for (const auto &r : v.rows) {
		std::vector<std::pair<std::string, std::string>> l = {
			{"handle", std::to_string(r.index)},
			{"pid", std::to_string(r.pid)},
			{"ruhid", std::to_string(r.ruhid)}};
		lbas.samples.push_back({l, std::to_string(r.ruamw)});
		bytes.samples.push_back({l, format_u128(static_cast<u128>(r.ruamw) * v.lba_size)});
		earutr.samples.push_back({l, std::to_string(r.earutr)});
	}
	return {lbas, bytes, earutr};
}

std::vector<MetricFamily> fdp_stats_metrics(const nvme::FdpStats &s, bool emulated)
{
	std::vector<MetricFamily> f = {
		{"kvfdp_fdp_hbmw_bytes", "Host bytes with metadata written (FDP statistics log 0x22).",
		 "counter", {{{}, format_u128(s.hbmw)}}},
		{"kvfdp_fdp_mbmw_bytes", "Media bytes with metadata written (FDP statistics log 0x22).",
		 "counter", {{{}, format_u128(s.mbmw)}}},
		{"kvfdp_fdp_mbe_bytes", "Media bytes erased (FDP statistics log 0x22).", "counter",
		 {{{}, format_u128(s.mbe)}}}};
	WafReading w = assess_waf(nvme::FdpStats{}, s, emulated);
	if (w.waf) {
		char buf[32];
		std::snprintf(buf, sizeof buf, "%.6g", *w.waf);
		f.push_back({"kvfdp_fdp_waf",
			     "Lifetime write amplification MBMW / HBMW; for an interval use "
			     "rate(kvfdp_fdp_mbmw_bytes) / rate(kvfdp_fdp_hbmw_bytes).",
			     "gauge", {{{}, buf}}});
	}
	return f;
}

std::vector<MetricFamily> status_metrics(const nlohmann::json &st)
{
	MetricFamily bytes{"kvfdp_class_bytes_total", "Bytes kvfdpd wrote per lifetime class.", "counter", {}};
	MetricFamily writes{"kvfdp_class_writes_total", "Writes kvfdpd placed per lifetime class.", "counter", {}};
	if (st.contains("classes") && st["classes"].is_array())
		for (const auto &c : st["classes"]) {
			std::string name = c.value("class", std::string("?"));
			bytes.samples.push_back({{{"class", name}}, std::to_string(u64(c, "bytes"))});
			writes.samples.push_back({{{"class", name}}, std::to_string(u64(c, "writes"))});
		}
	MetricFamily stale{"kvfdp_stale_tags_total",
			   "Writes whose tag slot did not match the request, placed as not_set.", "counter",
			   {{{}, std::to_string(u64(st, "stale_tags"))}}};
	return {bytes, writes, stale};
}

bool has_family(const std::string &text, const std::string &name)
{
	std::string key = "# TYPE " + name + " ";
	return text.find(key) != std::string::npos;
}

} // namespace kvfdp::cli
