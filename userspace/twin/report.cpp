// The twin's stats object and its metric families (its text is proto/twin_text.cpp's).
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
