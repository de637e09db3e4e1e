// WAF from FDP statistics: the CLI uses nvme/waf.hpp (shared with kvfdpd's /metrics).
#pragma once

#include "nvme/waf.hpp"

namespace kvfdp::cli {

using nvme::assess_waf;
using nvme::kWafMeaning;
using nvme::WafReading;

}  // namespace kvfdp::cli
