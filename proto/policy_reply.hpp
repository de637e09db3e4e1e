// The `policy` reply (docs/control.md): the policy in force, and under --placement learned
// the learner's groups and keys. kvfdpd writes it (kvfdpd/daemon/ctl/control_handlers.cpp,
// learned.cpp); `kvfdp policy show` prints it, and writes the same document for a config
// FILE it parsed itself (docs/cli.md), so every key is spelled here only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvfdp::proto {

// map: one class, the handle it goes to and that handle's placement ID (null: not on the
// device, or a FILE not checked against one).
struct PolicyMapRow {
	std::string cls;
	uint16_t handle = 0;
	std::optional<uint16_t> pid;
	std::optional<std::string> from;  // a FILE's: config | default
};
// rules: a directory rule.
struct PolicyRule {
	std::string path;
	std::string cls;
	std::optional<int64_t> line;  // a FILE's: its config line
};
// writers: a [[writer]] entry; handle is the one it fixes (null: the learner places it).
struct PolicyWriter {
	std::string name;
	std::optional<std::string> cgroup, dir;
	std::optional<uint16_t> handle;
};
// watch: the disk kvfdpd serves (kvfdpd's only) and the watched directory ("" all files).
struct PolicyWatch {
	std::optional<std::string> disk;
	std::string dir;
};
// learned.keys: one (writer, class) key the learner has seen (placement::KeyInfo).
struct LearnedKey {
	uint32_t writer_id = 0;
	std::optional<std::string> writer;  // null: unnamed (the CLI shows the id)
	std::string cls;
	uint32_t group = 0;
	uint16_t handle = 0;
	bool pinned = false;
	double lifetime_bytes = 0;
	double lifetime_s = 0;  // 0: unknown
	double write_share = 0;
	uint64_t live_bytes = 0;
	uint64_t written_bytes = 0;
	uint64_t died_bytes = 0;
};
// learned.grouping: how the last regroup grouped: by what the learner measured of each key,
// or one group per class, as hint places it (most writes come from writers replaced faster
// than they are measured, docs/placement.md).
inline constexpr const char *kGroupingMeasured = "measured";
inline constexpr const char *kGroupingByClass = "by_class";
// learned: the learner's state (kvfdpd --placement learned).
struct LearnedPolicy {
	std::string mode = "learned";
	uint32_t groups = 0;
	std::string grouping = kGroupingMeasured;
	std::vector<uint16_t> handles_used;
	uint64_t generation = 0;
	uint64_t clock_bytes = 0;  // the device write clock
	uint64_t recomputes = 0;
	uint64_t ruh_updates = 0;
	uint64_t ruh_update_refused = 0;
	uint64_t overflow_bytes = 0;
	uint32_t key_count = 0;     // keys the learner's table holds (of max_keys)
	uint32_t max_keys = 0;      // the table's bound
	uint64_t retired_keys = 0;  // keys retired since start (idle: docs/placement.md)
	std::string state_path;
	std::vector<LearnedKey> keys;
};
// kvfdpd's reply sets generation, loaded_at, writers and placement; the CLI's FILE document
// sets valid and checked_against_device instead. brief: `policy check`'s document, config,
// valid and checked_against_device or error, without the policy itself. Optional parts are
// written only when set (nruh: null when unknown).
struct PolicyReply {
	std::string config;
	std::optional<bool> valid;
	std::optional<bool> checked_against_device;
	std::optional<std::string> error;
	std::optional<uint64_t> generation;
	std::optional<int64_t> loaded_at;  // Unix seconds
	bool brief = false;
	std::optional<uint16_t> nruh;
	std::vector<PolicyMapRow> map;
	std::vector<PolicyRule> rules;
	std::optional<std::vector<PolicyWriter>> writers;
	std::optional<std::string> placement;  // class | learned
	PolicyWatch watch;
	std::optional<LearnedPolicy> learned;
};
void to_json(nlohmann::json &j, const PolicyMapRow &v);
void from_json(const nlohmann::json &j, PolicyMapRow &v);
void to_json(nlohmann::json &j, const PolicyRule &v);
void from_json(const nlohmann::json &j, PolicyRule &v);
void to_json(nlohmann::json &j, const PolicyWriter &v);
void from_json(const nlohmann::json &j, PolicyWriter &v);
void to_json(nlohmann::json &j, const PolicyWatch &v);
void from_json(const nlohmann::json &j, PolicyWatch &v);
void to_json(nlohmann::json &j, const LearnedKey &v);
void from_json(const nlohmann::json &j, LearnedKey &v);
void to_json(nlohmann::json &j, const LearnedPolicy &v);
void from_json(const nlohmann::json &j, LearnedPolicy &v);
void to_json(nlohmann::json &j, const PolicyReply &v);
void from_json(const nlohmann::json &j, PolicyReply &v);

}  // namespace kvfdp::proto
