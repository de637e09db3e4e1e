// DEGRADED: the texts of a kvfdpd that serves but places nothing.
#include "proto/health.hpp"

namespace kvfdp::proto {

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
	return {{"state", h.degraded ? "degraded" : "ok"}, {"why", h.why}};
}

Health health_from_status(const nlohmann::json &status)
{
	if (!status.is_object())
		return {};
	if (status.contains("health") && status["health"].is_object()) {
		const nlohmann::json &h = status["health"];
		return {h.value("state", std::string()) == "degraded",
			h.value("why", std::string())};
	}
	const nlohmann::json tg = status.value("tagging", nlohmann::json::object());
	if (!tg.is_object() || !tg.contains("active"))
		return {};
	return health_of(tg.value("active", false), tg.value("reason", std::string()));
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
