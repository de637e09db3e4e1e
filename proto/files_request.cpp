// Parsing a `files` request's arguments.
#include "proto/files_request.hpp"

#include "placement/classes.hpp"

namespace kvfdp::proto {

using placement::class_name;
using placement::kNumClasses;
using placement::parse_class;

using nlohmann::json;

namespace {

// The request's keys, each spelled once for the parser, the writer and the errors.
constexpr const char *kLimit = "limit";
constexpr const char *kSort = "sort";
constexpr const char *kClass = "class";
constexpr const char *kLive = "live";

std::string bad(const char *key, const std::string &what)
{
	return std::string("files: '") + key + "' must be " + what;
}

}  // namespace

bool parse_files_query(const json &args, FilesQuery &q, std::string &error)
{
	if (!args.is_object())
		return true;
	if (args.contains(kLimit)) {
		const json &v = args[kLimit];
		if (!v.is_number_integer() || v.get<int64_t>() <= 0) {
			error = bad(kLimit, "a positive integer");
			return false;
		}
		q.limit = v.get<uint64_t>();
	}
	if (args.contains(kSort)) {
		const json &v = args[kSort];
		const std::string o = v.is_string() ? v.get<std::string>() : "";
		if (o == "newest")
			q.order = FilesQuery::Order::newest;
		else if (o == "bytes")
			q.order = FilesQuery::Order::bytes;
		else {
			error = bad(kSort, "\"newest\" or \"bytes\"");
			return false;
		}
	}
	if (args.contains(kClass)) {
		const json &v = args[kClass];
		std::optional<uint8_t> c;
		if (v.is_string())
			c = parse_class(v.get<std::string>());
		else if (v.is_number_integer() && v.get<int64_t>() >= 0 &&
			 v.get<int64_t>() < kNumClasses)
			c = static_cast<uint8_t>(v.get<int64_t>());
		if (!c) {
			error = bad(kClass,
				    "a lifetime class (" + placement::class_names_list() + ")");
			return false;
		}
		q.cls = c;
	}
	if (args.contains(kLive)) {
		if (!args[kLive].is_boolean()) {
			error = bad(kLive, "true or false");
			return false;
		}
		q.live_only = args[kLive].get<bool>();
	}
	return true;
}

void to_json(json &j, const FilesQuery &q)
{
	j = {{kLimit, q.limit}, {kSort, q.order == FilesQuery::Order::bytes ? "bytes" : "newest"}};
	if (q.cls)
		j[kClass] = class_name(*q.cls);
	if (q.live_only)
		j[kLive] = true;
}

}  // namespace kvfdp::proto
