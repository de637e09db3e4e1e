// The twin's figures as kvfdpd reports them and the kvfdp CLI reads them: the `stats`
// reply's twin object, its text in `kvfdp stats`, and the kvfdp_twin_* metric families.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "proto/twin_stats.hpp"
#include "userspace/twin/models.hpp"

namespace kvfdp::twin {

// The stats reply's "twin" object (proto/twin_stats.hpp); a WAF is empty until something
// was written.
[[nodiscard]] proto::TwinStats report_stats(const TwinReport &t);
// `kvfdp stats`'s lines for a reply's twin object.
[[nodiscard]] std::string report_text(const proto::TwinStats &t);
// The same from the object's JSON (lenient: what it lacks reads as 0).
[[nodiscard]] std::string report_text(const nlohmann::json &twin);
// Prometheus text: kvfdp_twin_waf{placement}, kvfdp_twin_host_bytes_total,
// kvfdp_twin_media_bytes_total{placement}, kvfdp_twin_saved_bytes, kvfdp_twin_records_total,
// kvfdp_twin_dropped_total, kvfdp_twin_sample_rate, kvfdp_twin_memory_bytes.
[[nodiscard]] std::string metrics_text(const TwinReport &t);

} // namespace kvfdp::twin
