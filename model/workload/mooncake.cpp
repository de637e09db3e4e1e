// Mooncake trace parsing with nlohmann-json in non-throwing mode.
#include "model/workload/mooncake.hpp"

#include <cerrno>

#include <nlohmann/json.hpp>

#include "model/workload/trace_file.hpp"

namespace kvfdp::workload {

namespace {

Error line_error(const std::string &name, uint64_t line_no, const std::string &what)
{
	return guidance_error(
		std::errc::invalid_argument,
		name + ":" + std::to_string(line_no) + ": " + what +
			" (expected {\"timestamp\": ms, \"input_length\": n, "
			"\"output_length\": n, \"hash_ids\": [..]}; fix or drop the line)");
}

// A non-negative integer member: true and value set, or false.
bool get_uint(const nlohmann::json &obj, const char *key, uint64_t &value)
{
	auto it = obj.find(key);
	if (it == obj.end() || !it->is_number_unsigned())
		return false;
	value = it->get<uint64_t>();
	return true;
}

}  // namespace

Result<MooncakeRequest> parse_mooncake_line(const std::string &line, const std::string &name,
					    uint64_t line_no)
{
	nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
	if (j.is_discarded())
		return line_error(name, line_no, "not valid JSON");
	if (!j.is_object())
		return line_error(name, line_no, "not a JSON object");
	MooncakeRequest req;
	if (!get_uint(j, "timestamp", req.timestamp_ms))
		return line_error(name, line_no, "missing or non-integer \"timestamp\"");
	if (!get_uint(j, "input_length", req.input_length))
		return line_error(name, line_no, "missing or non-integer \"input_length\"");
	// output_length does not affect the KV cache of the prompt; optional.
	if (j.contains("output_length") && !get_uint(j, "output_length", req.output_length))
		return line_error(name, line_no, "non-integer \"output_length\"");
	auto ids = j.find("hash_ids");
	if (ids == j.end() || !ids->is_array())
		return line_error(name, line_no, "missing \"hash_ids\" array");
	req.hash_ids.reserve(ids->size());
	for (const auto &id : *ids) {
		if (!id.is_number_unsigned())
			return line_error(name, line_no, "a hash id is not a non-negative integer");
		req.hash_ids.push_back(id.get<uint64_t>());
	}
	// Each hash id is one 512-token block of the prompt, the last one possibly partial.
	const uint64_t blocks = req.input_length / kMooncakeBlockTokens +
				(req.input_length % kMooncakeBlockTokens ? 1 : 0);
	if (blocks != req.hash_ids.size())
		return line_error(name, line_no,
				  "\"input_length\" " + std::to_string(req.input_length) +
					  " makes " + std::to_string(blocks) +
					  " blocks of 512 tokens but \"hash_ids\" has " +
					  std::to_string(req.hash_ids.size()));
	return req;
}

Result<MooncakeReader> MooncakeReader::open(const std::string &path)
{
	KVFDP_TRY(check_trace_file(path, "Mooncake trace", "--kv-trace FILE.jsonl"));
	MooncakeReader r;
	r.in_.open(path);
	if (!r.in_)
		return errno_error(errno ? errno : ENOENT,
				   "open Mooncake trace " + path + " (pass --kv-trace FILE.jsonl)");
	r.path_ = path;
	return r;
}

Result<bool> MooncakeReader::next(MooncakeRequest &req)
{
	while (std::getline(in_, line_)) {
		++line_no_;
		if (line_.find_first_not_of(" \t\r") == std::string::npos)
			continue;
		auto r = parse_mooncake_line(line_, path_, line_no_);
		if (!r)
			return std::move(r).error();
		if (r->timestamp_ms < last_ms_)
			return line_error(path_, line_no_,
					  "\"timestamp\" " + std::to_string(r->timestamp_ms) +
						  " is earlier than line " +
						  std::to_string(last_line_) + "'s " +
						  std::to_string(last_ms_) +
						  ": requests must be in time order");
		last_ms_ = r->timestamp_ms;
		last_line_ = line_no_;
		req = std::move(*r);
		return true;
	}
	if (in_.bad())
		return errno_error(EIO,
				   "read " + path_ + " at line " + std::to_string(line_no_ + 1));
	return false;
}

Result<std::vector<MooncakeRequest>> load_mooncake(const std::string &path, uint64_t max_requests)
{
	auto reader = MooncakeReader::open(path);
	if (!reader)
		return std::move(reader).error();
	std::vector<MooncakeRequest> out;
	MooncakeRequest req;
	for (;;) {
		if (max_requests && out.size() >= max_requests)
			break;
		auto more = reader->next(req);
		if (!more)
			return std::move(more).error();
		if (!*more)
			break;
		out.push_back(std::move(req));
	}
	if (out.empty())
		return guidance_error(
			std::errc::invalid_argument,
			path + ": no requests in the trace (is it a Mooncake .jsonl file?)");
	return out;
}

}  // namespace kvfdp::workload
