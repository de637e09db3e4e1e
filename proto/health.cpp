// DEGRADED: the texts of a kvfdpd that serves but places nothing.
#include "proto/health.hpp"

#include "proto/json_read.hpp"

namespace kvfdp::proto {

namespace {

// The health object's keys.
constexpr const char *kState = "state";
constexpr const char *kWhy = "why";

}  // namespace

Health health_of(bool tagger_active, const std::string &tagger_reason)
{
	if (tagger_active)
		return {};
	return {true, "the BPF tagger is not active" +
			      (tagger_reason.empty() ? std::string() : " (" + tagger_reason + ")") +
			      ": every write goes to the default handle, unplaced"};
}

nlohmann::json health_json(const Health &h)
{
	return {{kState, h.degraded ? "degraded" : "ok"}, {kWhy, h.why}};
}

void to_json(nlohmann::json &j, const Health &v)
{
	j = health_json(v);
}

void from_json(const nlohmann::json &j, Health &v)
{
	std::string state;
	read_field(j, kState, state);
	v.degraded = state == "degraded";
	read_field(j, kWhy, v.why);
}

Health health_from_status(const nlohmann::json &status)
{
	if (!status.is_object())
		return {};
	Health h;
	if (status.contains("health") && status["health"].is_object()) {
		from_json(status["health"], h);
		return h;
	}
	const nlohmann::json tg = status.value("tagging", nlohmann::json::object());
	if (!tg.is_object() || !tg.contains("active"))
		return {};
	bool active = false;
	std::string reason;
	read_field(tg, "active", active);
	read_field(tg, "reason", reason);
	return health_of(active, reason);
}

std::string serving_status(const std::string &what, const Health &h)
{
	return h.degraded ? "DEGRADED: " + what + ", " + h.why : what;
}

std::string require_tagger_refusal(const std::string &from, const std::string &tagger_reason)
{
	return "the BPF tagger is required (" + from + ") but not active" +
	       (tagger_reason.empty() ? std::string() : " (" + tagger_reason + ")") +
	       ": fix what that names (docs/deploy.md, When placement does not happen), or drop " +
	       (from == "--require-tagger" ? "--require-tagger" : "require_tagger") +
	       " to serve with every write on the default handle";
}

}  // namespace kvfdp::proto
