// `kvfdp stats`'s lines for the live twin: its WAF with placement and without, what placement
// saved, the sampling, and GC relocations by handle (docs/twin.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "proto/twin_stats.hpp"

namespace kvfdp::proto {

// The lines for a stats reply's twin object.
[[nodiscard]] std::string twin_text(const TwinStats &t);
// The same from the object's JSON (lenient: what it lacks reads as 0).
[[nodiscard]] std::string twin_text(const nlohmann::json &twin);
// The stats reply's drive_handles as one line, "relocated by handle, as the drive reports
// (FDP events log): 0: 1.00 MiB (90%), ...", or "" while the drive reported none.
[[nodiscard]] std::string drive_handles_text(const std::vector<TwinHandle> &handles);

}  // namespace kvfdp::proto
