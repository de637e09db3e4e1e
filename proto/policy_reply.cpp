// The `policy` reply's JSON: one field table per struct (proto/json_fields.hpp).
#include "proto/policy_reply.hpp"

#include "proto/json_fields.hpp"

namespace kvfdp::proto {

using nlohmann::json;

namespace {

constexpr auto kPolicyMapRow =
	std::tuple{field("class", &PolicyMapRow::cls), field("handle", &PolicyMapRow::handle),
		   nullable("pid", &PolicyMapRow::pid), field("from", &PolicyMapRow::from)};

constexpr auto kPolicyRule =
	std::tuple{field("path", &PolicyRule::path), field("class", &PolicyRule::cls),
		   field("line", &PolicyRule::line)};

constexpr auto kPolicyWriter =
	std::tuple{field("name", &PolicyWriter::name), nullable("cgroup", &PolicyWriter::cgroup),
		   nullable("dir", &PolicyWriter::dir), nullable("handle", &PolicyWriter::handle)};

constexpr auto kPolicyWatch =
	std::tuple{field("disk", &PolicyWatch::disk), field("dir", &PolicyWatch::dir)};

constexpr auto kLearnedKey = std::tuple{field("writer_id", &LearnedKey::writer_id),
					nullable("writer", &LearnedKey::writer),
					field("class", &LearnedKey::cls),
					field("group", &LearnedKey::group),
					field("handle", &LearnedKey::handle),
					field("pinned", &LearnedKey::pinned),
					field("lifetime_bytes", &LearnedKey::lifetime_bytes),
					field("lifetime_s", &LearnedKey::lifetime_s),
					field("write_share", &LearnedKey::write_share),
					field("live_bytes", &LearnedKey::live_bytes),
					field("written_bytes", &LearnedKey::written_bytes),
					field("died_bytes", &LearnedKey::died_bytes)};

constexpr auto kLearnedPolicy =
	std::tuple{field("mode", &LearnedPolicy::mode),
		   field("groups", &LearnedPolicy::groups),
		   field("grouping", &LearnedPolicy::grouping),
		   field("handles_used", &LearnedPolicy::handles_used),
		   field("generation", &LearnedPolicy::generation),
		   field("clock_bytes", &LearnedPolicy::clock_bytes),
		   field("recomputes", &LearnedPolicy::recomputes),
		   field("ruh_updates", &LearnedPolicy::ruh_updates),
		   field("ruh_update_refused", &LearnedPolicy::ruh_update_refused),
		   field("overflow_bytes", &LearnedPolicy::overflow_bytes),
		   field("key_count", &LearnedPolicy::key_count),
		   field("max_keys", &LearnedPolicy::max_keys),
		   field("retired_keys", &LearnedPolicy::retired_keys),
		   field("state_path", &LearnedPolicy::state_path),
		   field("keys", &LearnedPolicy::keys)};

// A policy reply's head, the whole of a brief one (`policy check`), and the policy after it.
constexpr auto kPolicyHead =
	std::tuple{field("config", &PolicyReply::config), field("valid", &PolicyReply::valid),
		   field("checked_against_device", &PolicyReply::checked_against_device),
		   field("error", &PolicyReply::error)};
constexpr auto kPolicyBody = std::tuple{
	field("generation", &PolicyReply::generation), field("loaded_at", &PolicyReply::loaded_at),
	nullable("nruh", &PolicyReply::nruh),          field("map", &PolicyReply::map),
	field("rules", &PolicyReply::rules),           field("writers", &PolicyReply::writers),
	field("placement", &PolicyReply::placement),   field("watch", &PolicyReply::watch),
	field("learned", &PolicyReply::learned)};

}  // namespace

KVFDP_JSON_FIELDS(PolicyMapRow, kPolicyMapRow);
KVFDP_JSON_FIELDS(PolicyRule, kPolicyRule);
KVFDP_JSON_FIELDS(PolicyWriter, kPolicyWriter);
KVFDP_JSON_FIELDS(PolicyWatch, kPolicyWatch);
KVFDP_JSON_FIELDS(LearnedKey, kLearnedKey);
KVFDP_JSON_FIELDS(LearnedPolicy, kLearnedPolicy);

void to_json(json &j, const PolicyReply &v)
{
	write_fields(j, v, kPolicyHead);
	if (v.brief)
		return;
	json body;
	write_fields(body, v, kPolicyBody);
	j.update(body);
}

void from_json(const json &j, PolicyReply &v)
{
	read_fields(j, v, std::tuple_cat(kPolicyHead, kPolicyBody));
}

}  // namespace kvfdp::proto
