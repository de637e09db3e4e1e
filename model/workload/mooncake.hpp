// Mooncake trace reader: one JSON object per line, {"timestamp": ms, "input_length": tokens,
// "output_length": tokens, "hash_ids": [..]}; each hash id names one 512-token prompt block.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace kvfdp::workload {

// Tokens per hash id in the Mooncake traces.
inline constexpr uint32_t kMooncakeBlockTokens = 512;

struct MooncakeRequest {
	uint64_t timestamp_ms = 0;
	uint64_t input_length = 0;
	uint64_t output_length = 0;
	std::vector<uint64_t> hash_ids;
};

// Parses one line. On a malformed line the error reads "NAME:LINE: <what is wrong>"; the
// hash ids must be the ceil(input_length / 512) blocks of the prompt.
[[nodiscard]] Result<MooncakeRequest>
parse_mooncake_line(const std::string &line, const std::string &name, uint64_t line_no);

// Streams a trace file (a regular file) line by line; blank lines are skipped, and a
// timestamp earlier than the previous request's is an error naming the line.
class MooncakeReader {
public:
	[[nodiscard]] static Result<MooncakeReader> open(const std::string &path);
	// Reads the next request into req: true, or false at the end of the file.
	// A malformed line is an error naming the file and the line number.
	[[nodiscard]] Result<bool> next(MooncakeRequest &req);
	[[nodiscard]] uint64_t line_no() const { return line_no_; }

private:
	std::ifstream in_;
	std::string path_;
	std::string line_;
	uint64_t line_no_ = 0;
	uint64_t last_ms_ = 0;  // timestamp of the previous request
	uint64_t last_line_ = 0;
};

// Reads a whole trace, at most max_requests of them (0 = all).
[[nodiscard]] Result<std::vector<MooncakeRequest>> load_mooncake(const std::string &path,
								 uint64_t max_requests = 0);

}  // namespace kvfdp::workload
