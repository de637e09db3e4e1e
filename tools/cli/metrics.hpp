// `kvfdp metrics`: the metric families (userspace/daemon/metrics.hpp, shared with kvfdpd's
// /metrics) from the CLI's views of a device or of kvfdpd's replies.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvme/logs.hpp"
#include "tools/cli/source.hpp"
#include "userspace/daemon/metrics.hpp"

namespace kvfdp::cli {

using daemon::has_family;
using daemon::MetricFamily;
using daemon::MetricSample;
using daemon::render_metrics;

// kvfdp_ruh_ruamw_lbas, kvfdp_ruh_ruamw_bytes, kvfdp_ruh_earutr_seconds per handle.
[[nodiscard]] std::vector<MetricFamily> ruh_metrics(const RuhView &v);
// kvfdp_fdp_{hbmw,mbmw,mbe}_bytes and kvfdp_fdp_waf when the counters support one.
[[nodiscard]] std::vector<MetricFamily> fdp_stats_metrics(const nvme::FdpStats &s, bool emulated);
// kvfdp_class_bytes_total, kvfdp_class_writes_total, kvfdp_stale_tags_total and, when the
// reply has tagging.active, kvfdp_tagger_active from kvfdpd's status reply (for a kvfdpd whose
// metrics text lacks them).
[[nodiscard]] std::vector<MetricFamily> status_metrics(const nlohmann::json &status);

} // namespace kvfdp::cli
