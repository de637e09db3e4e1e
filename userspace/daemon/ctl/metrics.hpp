// kvfdpd's names for the metric families and their renderer (proto/metrics.hpp, shared with
// the kvfdp CLI).
#pragma once

#include "proto/metrics.hpp"

namespace kvfdp::daemon {

using proto::counter_families;
using proto::daemon_up_family;
using proto::fdp_stats_families;
using proto::format_metrics;
using proto::has_family;
using proto::learned_families;
using proto::MetricFamily;
using proto::MetricSample;
using proto::MetricsInput;
using proto::render_metrics;
using proto::ruh_families;

}  // namespace kvfdp::daemon
