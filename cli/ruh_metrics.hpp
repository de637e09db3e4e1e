// `kvfdp metrics` straight from a device: the metric families (proto/metrics.hpp, the ones
// kvfdpd's /metrics renders) from the CLI's views of it. From kvfdpd the CLI prints kvfdpd's
// own text.
#pragma once

#include <vector>

#include "nvme/logs.hpp"
#include "proto/metrics.hpp"
#include "cli/source.hpp"

namespace kvfdp::cli {

// kvfdp_ruh_ruamw_lbas, kvfdp_ruh_ruamw_bytes, kvfdp_ruh_earutr_seconds per handle.
[[nodiscard]] std::vector<proto::MetricFamily> ruh_metrics(const RuhView &v);

}  // namespace kvfdp::cli
