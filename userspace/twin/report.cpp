// The twin's stats object, its text and its metric families.
#include "userspace/twin/report.hpp"

#include <cstdio>
#include <optional>

#include "proto/control.hpp"

namespace kvfdp::twin {

namespace {

using nlohmann::json;

proto::TwinCopy copy_of(double waf, uint64_t host, uint64_t media, uint64_t relocated)
{
	return {host ? std::optional<double>(waf) : std::nullopt, media, relocated};
}

std::string bytes_text(double b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	const bool neg = b < 0;
	if (neg)
		b = -b;
	int u = 0;
	while (b >= 1024 && u < 5) {
		b /= 1024;
		u++;
	}
	char buf[48];
	std::snprintf(buf, sizeof buf, u ? "%s%.2f %s" : "%s%.0f %s", neg ? "-" : "", b, units[u]);
	return buf;
}

std::string waf_text(const std::optional<double> &waf)
{
	if (!waf)
		return "n/a (nothing written yet)";
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.3f", *waf);
	return buf;
}

// "relocated by handle" and the handles GC copied from or the host wrote through, with
// their share of the copies (docs/twin.md, Noisy handles); "" without per-handle figures.
std::string handles_text(const std::vector<proto::TwinHandle> &handles)
{
	uint64_t all = 0;
	for (const proto::TwinHandle &h : handles)
		all += h.relocated_bytes;
	std::string list;
	for (const proto::TwinHandle &h : handles) {
		if (!h.host_bytes && !h.relocated_bytes)
			continue;
		char item[96];
		std::snprintf(item, sizeof item, "%s%u: %s (%.0f%%)", list.empty() ? "" : ", ", h.handle,
			      bytes_text(static_cast<double>(h.relocated_bytes)).c_str(),
			      all ? 100.0 * static_cast<double>(h.relocated_bytes) / static_cast<double>(all) : 0.0);
		list += item;
	}
	if (list.empty())
		return {};
	char head[32];
	std::snprintf(head, sizeof head, "  %-22s ", "relocated by handle");
	return head + list + "\n";
}

} // namespace

proto::TwinStats report_stats(const TwinReport &t)
{
	proto::TwinStats s;
	s.rate = t.rate;
	s.memory_bytes = t.memory_bytes;
	s.model_logical_bytes = t.model_logical_bytes;
	s.model_ru_bytes = t.model_ru_bytes;
	s.records = t.records;
	s.dropped = t.dropped;
	s.model_errors = t.model_errors;
	s.host_bytes = t.host_bytes;
	s.placed = copy_of(t.waf_placed, t.host_bytes, t.media_bytes_placed, t.relocated_bytes_placed);
	s.none = copy_of(t.waf_none, t.host_bytes, t.media_bytes_none, t.relocated_bytes_none);
	s.saved_bytes = t.saved_bytes;
	for (uint32_t h = 0; h < t.handles_placed.size(); h++)
		s.handles.push_back({h, t.handles_placed[h].host_bytes, t.handles_placed[h].relocated_bytes});
	return s;
}

std::string report_text(const proto::TwinStats &t)
{
	char line[256];
	std::string out = "\ntwin (docs/twin.md): the FDP SSD model fed kvfdpd's writes and trims since it started\n";
	std::snprintf(line, sizeof line, "  %-22s %s\n", "waf with placement", waf_text(t.placed.waf).c_str());
	out += line;
	std::snprintf(line, sizeof line, "  %-22s %s\n", "waf without (none)", waf_text(t.none.waf).c_str());
	out += line;
	std::snprintf(line, sizeof line, "  %-22s %s of media writes (projected host writes %s)\n", "saved by placement",
		      bytes_text(static_cast<double>(t.saved_bytes)).c_str(),
		      bytes_text(static_cast<double>(t.host_bytes)).c_str());
	out += line;
	std::snprintf(line, sizeof line, "  %-22s %.6g of the LBA space and of each RU, %s of memory\n", "sampled",
		      t.rate, bytes_text(static_cast<double>(t.memory_bytes)).c_str());
	out += line;
	std::snprintf(line, sizeof line, "  %-22s %.0f (%.0f dropped: ring full)\n", "records",
		      static_cast<double>(t.records), static_cast<double>(t.dropped));
	out += line;
	return out + handles_text(t.handles);
}

std::string report_text(const json &twin) { return report_text(proto::reply_as<proto::TwinStats>(twin)); }

std::string metrics_text(const TwinReport &t)
{
	std::string o;
	char line[256];
	auto family = [&o](const char *name, const char *type, const char *help) {
		o += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
	};
	family("kvfdp_twin_waf", "gauge",
	       "Projected WAF since kvfdpd started, by the live twin: with kvfdpd's placement, and with none (0 until written).");
	std::snprintf(line, sizeof line, "kvfdp_twin_waf{placement=\"placed\"} %.6f\nkvfdp_twin_waf{placement=\"none\"} %.6f\n",
		      t.waf_placed, t.waf_none);
	o += line;
	family("kvfdp_twin_host_bytes_total", "counter", "Projected host bytes written, the twin's input.");
	std::snprintf(line, sizeof line, "kvfdp_twin_host_bytes_total %llu\n", static_cast<unsigned long long>(t.host_bytes));
	o += line;
	family("kvfdp_twin_media_bytes_total", "counter", "Projected media bytes written (host and GC), by placement.");
	std::snprintf(line, sizeof line,
		      "kvfdp_twin_media_bytes_total{placement=\"placed\"} %llu\nkvfdp_twin_media_bytes_total{placement=\"none\"} %llu\n",
		      static_cast<unsigned long long>(t.media_bytes_placed), static_cast<unsigned long long>(t.media_bytes_none));
	o += line;
	family("kvfdp_twin_saved_bytes", "gauge", "Projected media bytes placement saved the drive (none minus placed).");
	std::snprintf(line, sizeof line, "kvfdp_twin_saved_bytes %lld\n", static_cast<long long>(t.saved_bytes));
	o += line;
	family("kvfdp_twin_records_total", "counter", "I/O records the twin applied.");
	std::snprintf(line, sizeof line, "kvfdp_twin_records_total %llu\n", static_cast<unsigned long long>(t.records));
	o += line;
	family("kvfdp_twin_dropped_total", "counter", "I/O records the twin lost to a full ring (never blocks I/O).");
	std::snprintf(line, sizeof line, "kvfdp_twin_dropped_total %llu\n", static_cast<unsigned long long>(t.dropped));
	o += line;
	family("kvfdp_twin_sample_rate", "gauge", "Fraction of the LBA space (and of each RU) the twin models.");
	std::snprintf(line, sizeof line, "kvfdp_twin_sample_rate %.9f\n", t.rate);
	o += line;
	family("kvfdp_twin_memory_bytes", "gauge", "Memory of the twin's two models and its rings.");
	std::snprintf(line, sizeof line, "kvfdp_twin_memory_bytes %llu\n", static_cast<unsigned long long>(t.memory_bytes));
	o += line;
	return o;
}

} // namespace kvfdp::twin
