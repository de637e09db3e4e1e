// The arguments of a `files` control request (docs/control.md): which records, in which
// order, how many. kvfdpd filters and ranks over every record it holds; the CLI writes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kvfdp::proto {

// What a `files` request asks for: the daemon filters and ranks over every record it holds
// (live and deleted), then returns at most limit rows.
struct FilesQuery {
	enum class Order : uint8_t { newest, bytes };
	uint64_t limit = 1000;
	Order order = Order::newest;  // newest event first (birth of a live file, death of a
				      // deleted one), or largest first (ties: newest first)
	std::optional<uint8_t> cls;   // only files of this class
	bool live_only = false;       // only files not yet deleted
};

// Reads the optional args "limit" (positive integer), "sort" ("newest" or "bytes"), "class"
// (a class name or 0..5) and "live" (boolean) of a `files` request. false with a one-line
// error for a bad value.
[[nodiscard]] bool parse_files_query(const nlohmann::json &args, FilesQuery &q, std::string &error);
// The request's arguments: limit and sort always, class and live when they filter.
void to_json(nlohmann::json &j, const FilesQuery &q);

}  // namespace kvfdp::proto
