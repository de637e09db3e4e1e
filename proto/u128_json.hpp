// 128-bit counters (the FDP statistics log's fields) on the wire: a JSON number when the value
// fits in 64 bits, else a decimal string; and as decimal text (metrics, tables).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "nvme/u128.hpp"

namespace kvfdp::proto {

// Decimal digits of v ("0" for 0).
[[nodiscard]] std::string u128_text(nvme::u128 v);
[[nodiscard]] nlohmann::json u128_json(nvme::u128 v);
// Reads a counter written by u128_json (number or decimal string); 0 when absent or bad.
[[nodiscard]] nvme::u128 u128_from_json(const nlohmann::json &j);

}  // namespace kvfdp::proto
