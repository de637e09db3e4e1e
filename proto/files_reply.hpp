// The `files` reply (docs/control.md): kvfdpd's per-file records, one row per tagged file,
// with per-class lifetime summaries. kvfdpd writes it (kvfdpd/daemon/ctl/files_rows.cpp) and
// `kvfdp files` reads it and prints its rows, so every key is spelled here only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvfdp::proto {

// One file: birth/death are Unix times in seconds (null: unknown, or alive).
struct FileRow {
	std::string dev;  // major:minor of the filesystem's device
	uint64_t ino = 0;
	std::string cls;
	std::string class_from;  // hint | rule | none
	uint64_t bytes = 0;
	std::optional<double> birth, death, lifetime_s;
	uint32_t pid = 0;
	std::string comm;
	uint32_t writer_id = 0;
	uint64_t cgroup_id = 0;
	std::optional<std::string> writer;  // written only when known
	std::optional<std::string> path;    // written only when known (kvfdpd sends none yet)
	// `kvfdp files -o json` adds these to each row it prints: live | deleted, and a live
	// file's age in seconds.
	std::optional<std::string> state;
	std::optional<double> age_s;
};
// One class's deleted files with a known lifetime: how many and their mean (null: none).
struct ClassLifetime {
	std::string cls;
	uint64_t count = 0;
	std::optional<double> mean_s;
};
// Without the tagger: available false, the reason, no files. Optional parts are written
// only when set.
struct FilesReply {
	bool available = true;
	std::optional<std::string> reason;
	std::optional<uint64_t> live, deleted;  // records held
	std::optional<uint64_t> matched;        // records that pass the request's filter
	std::vector<FileRow> files;
	std::optional<std::vector<ClassLifetime>> lifetimes;
	std::optional<uint64_t> limit;  // the row cap kvfdpd applied
};
void to_json(nlohmann::json &j, const FileRow &v);
void from_json(const nlohmann::json &j, FileRow &v);
void to_json(nlohmann::json &j, const ClassLifetime &v);
void from_json(const nlohmann::json &j, ClassLifetime &v);
void to_json(nlohmann::json &j, const FilesReply &v);
void from_json(const nlohmann::json &j, FilesReply &v);

}  // namespace kvfdp::proto
