// Parsing a `files` request's arguments.
#include "proto/files_request.hpp"

#include "placement/classes.hpp"

namespace kvfdp::proto {

using placement::class_name;
using placement::kNumClasses;
using placement::parse_class;

using nlohmann::json;

bool parse_files_query(const json &args, FilesQuery &q, std::string &error)
{
	if (!args.is_object())
		return true;
	if (args.contains("limit")) {
		const json &v = args["limit"];
		if (!v.is_number_integer() || v.get<int64_t>() <= 0) {
			error = "files: 'limit' must be a positive integer";
			return false;
		}
		q.limit = v.get<uint64_t>();
	}
	if (args.contains("sort")) {
		const json &v = args["sort"];
		const std::string o = v.is_string() ? v.get<std::string>() : "";
		if (o == "newest")
			q.order = FilesQuery::Order::newest;
		else if (o == "bytes")
			q.order = FilesQuery::Order::bytes;
		else {
			error = "files: 'sort' must be \"newest\" or \"bytes\"";
			return false;
		}
	}
	if (args.contains("class")) {
		const json &v = args["class"];
		std::optional<uint8_t> c;
		if (v.is_string())
			c = parse_class(v.get<std::string>());
		else if (v.is_number_integer() && v.get<int64_t>() >= 0 &&
			 v.get<int64_t>() < kNumClasses)
			c = static_cast<uint8_t>(v.get<int64_t>());
		if (!c) {
			error = "files: 'class' must be a lifetime class (" +
				placement::class_names_list() + ")";
			return false;
		}
		q.cls = c;
	}
	if (args.contains("live")) {
		if (!args["live"].is_boolean()) {
			error = "files: 'live' must be true or false";
			return false;
		}
		q.live_only = args["live"].get<bool>();
	}
	return true;
}

void to_json(json &j, const FilesQuery &q)
{
	j = {{"limit", q.limit},
	     {"sort", q.order == FilesQuery::Order::bytes ? "bytes" : "newest"}};
	if (q.cls)
		j["class"] = class_name(*q.cls);
	if (q.live_only)
		j["live"] = true;
}

}  // namespace kvfdp::proto
