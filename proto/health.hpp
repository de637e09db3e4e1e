// kvfdpd's health. A serving kvfdpd is DEGRADED when it places nothing: the BPF tagger is not
// active, so every write goes to the default handle (it still serves: availability first).
// The one text of it for every place that says so: the first line of `kvfdp status` and its
// "health" key, the unit's STATUS=, and a start that require_tagger refuses.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kvfdp::proto {

struct Health {
	bool degraded = false;
	std::string why;  // "" when not degraded
};

// The health of a kvfdpd whose tagger is (not) active, for that reason (TaggerOwner::reason()).
[[nodiscard]] Health health_of(bool tagger_active, const std::string &tagger_reason);

// {"state": "ok" | "degraded", "why": "..."}: the "health" key of the status reply.
[[nodiscard]] nlohmann::json health_json(const Health &h);
void to_json(nlohmann::json &j, const Health &v);  // health_json
// Lenient (proto/json_read.hpp): degraded only for a "state" of "degraded".
void from_json(const nlohmann::json &j, Health &v);
// The same read back (a reply without the key: from its "tagging" object, as health_of).
[[nodiscard]] Health health_from_status(const nlohmann::json &status);

// The unit's STATUS= while serving: what ("serving /dev/ublkb0"), or "DEGRADED: what, why".
[[nodiscard]] std::string serving_status(const std::string &what, const Health &h);

// The one line a start with require_tagger (from: "--require-tagger" or "FILE:LINE") is
// refused with when the tagger is not active: why, and what to do.
[[nodiscard]] std::string require_tagger_refusal(const std::string &from,
						 const std::string &tagger_reason);

}  // namespace kvfdp::proto
