// The twin's figures as kvfdpd reports them: the `stats` reply's twin object and the
// kvfdp_twin_* metric families (the CLI's text of the object is proto/twin_text.hpp's).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "proto/twin_stats.hpp"
#include "userspace/twin/models.hpp"

namespace kvfdp::twin {

// The stats reply's "twin" object (proto/twin_stats.hpp); a WAF is empty until something
// was written.
[[nodiscard]] proto::TwinStats report_stats(const TwinReport &t);
// Prometheus text: kvfdp_twin_waf{placement}, kvfdp_twin_host_bytes_total,
// kvfdp_twin_media_bytes_total{placement}, kvfdp_twin_saved_bytes, kvfdp_twin_records_total,
// kvfdp_twin_dropped_total, kvfdp_twin_sample_rate, kvfdp_twin_memory_bytes.
[[nodiscard]] std::string metrics_text(const TwinReport &t);

} // namespace kvfdp::twin
