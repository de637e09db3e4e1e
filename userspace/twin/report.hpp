// The twin's figures as kvfdpd reports them and the kvfdp CLI reads them: the `stats`
// reply's "twin" object, its text in `kvfdp stats`, and the kvfdp_twin_* metric families.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "userspace/twin/models.hpp"

namespace kvfdp::twin {

// {"rate", "memory_bytes", "model_logical_bytes", "model_ru_bytes", "records", "dropped",
//  "model_errors", "host_bytes", "placed": {"waf", "media_bytes", "relocated_bytes"},
//  "none": {...}, "saved_bytes"}; a WAF is null until something was written.
[[nodiscard]] nlohmann::json report_json(const TwinReport &t);
// `kvfdp stats`'s lines for a reply's "twin" object (keys as report_json writes them).
[[nodiscard]] std::string report_text(const nlohmann::json &twin);
// Prometheus text: kvfdp_twin_waf{placement}, kvfdp_twin_host_bytes_total,
// kvfdp_twin_media_bytes_total{placement}, kvfdp_twin_saved_bytes, kvfdp_twin_records_total,
// kvfdp_twin_dropped_total, kvfdp_twin_sample_rate, kvfdp_twin_memory_bytes.
[[nodiscard]] std::string metrics_text(const TwinReport &t);

} // namespace kvfdp::twin
