// Prometheus text exposition (format 0.0.4) for node_exporter's textfile collector:
// metric families built from RUH Status, FDP statistics and kvfdpd's status.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvme/logs.hpp"
#include "tools/cli/source.hpp"

namespace kvfdp::cli {

struct MetricSample {
	std::vector<std::pair<std::string, std::string>> labels;  // in print order
	std::string value;                                        // already formatted
};

struct MetricFamily {
	std::string name;
	std::string help;
	std::string type;  // counter | gauge
	std::vector<MetricSample> samples;
};

// "# HELP", "# TYPE" and sample lines per family; label values escaped (\\, \", \n).
[[nodiscard]] std::string render_metrics(const std::vector<MetricFamily> &families);

// kvfdp_ruh_ruamw_lbas, kvfdp_ruh_ruamw_bytes, kvfdp_ruh_earutr_seconds per handle
// ({handle, pid, ruhid}).
[[nodiscard]] std::vector<MetricFamily> ruh_metrics(const RuhView &v);
// kvfdp_fdp_hbmw_bytes, kvfdp_fdp_mbmw_bytes, kvfdp_fdp_mbe_bytes, and kvfdp_fdp_waf (lifetime,
// only when the counters support one).
[[nodiscard]] std::vector<MetricFamily> fdp_stats_metrics(const nvme::FdpStats &s, bool emulated);
// kvfdp_class_bytes_total, kvfdp_class_writes_total, kvfdp_stale_tags_total from kvfdpd's
// status reply.
[[nodiscard]] std::vector<MetricFamily> status_metrics(const nlohmann::json &status);

// True when exposition text already has a family of this name (a "# TYPE name" line).
[[nodiscard]] bool has_family(const std::string &text, const std::string &name);

} // namespace kvfdp::cli
