// The twin's figures as kvfdpd reports them: the `stats` reply's twin object and the
// kvfdp_twin_* metric families (the CLI's text of the object is proto/twin_text.hpp's).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "proto/twin_stats.hpp"
#include "model/twin/models.hpp"

namespace kvfdp::twin {

// The stats reply's "twin" object (proto/twin_stats.hpp); a WAF is empty until something
// was written.
[[nodiscard]] proto::TwinStats report_stats(const TwinReport &t);
// Prometheus text of report_stats(t): the kvfdp_twin_* families (proto::twin_families, the one
// home of their names).
[[nodiscard]] std::string metrics_text(const TwinReport &t);

}  // namespace kvfdp::twin
