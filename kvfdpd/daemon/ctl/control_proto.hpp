// Control protocol (docs/control.md): JSON-lines request parsing, reply formatting, who may
// send what, and the per-connection line buffer with its 64 KiB limit. Pure; fuzzed by
// tests/kvfdpd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvfdp::daemon {

inline constexpr size_t kMaxRequestLine = 64 * 1024;

struct Request {
	std::string cmd;
	nlohmann::json args;  // the whole request object
};

// Parses one request line (without its '\n'). On failure returns false and sets error to
// the one-line reply text. Never throws.
[[nodiscard]] bool parse_request(std::string_view line, Request &out, std::string &error);

// One reply line each, '\n' included.
[[nodiscard]] std::string reply_ok(const nlohmann::json &data);
[[nodiscard]] std::string reply_error(std::string_view message);

// Optional positive integer argument: returns false (and sets error) when present but bad.
[[nodiscard]] bool get_positive_arg(const Request &req, const char *key, uint64_t &value,
				    std::string &error);

// A control connection's peer, from its socket's credentials at accept (SO_PEERCRED,
// SO_PEERGROUPS).
struct Peer {
	uint32_t uid = UINT32_MAX;  // UINT32_MAX: unknown
	bool admin = false;         // may send the requests that change state
};

// Whether a peer of uid, primary gid and supplementary groups is an admin: uid 0, or
// admin_gid (the admin group's gid, empty where it does not exist) is its gid or one of groups.
[[nodiscard]] bool is_admin(uint32_t uid, uint32_t gid, const std::vector<uint32_t> &groups,
			    std::optional<uint32_t> admin_gid);

// The one-line refusal of request cmd from peer, "" when peer may send it: a request that
// changes state (proto::changes_state) needs an admin.
[[nodiscard]] std::string access_refusal(std::string_view cmd, const Peer &peer);

// Splits a byte stream into lines of at most kMaxRequestLine bytes.
class LineBuffer {
public:
	// Appends bytes. Returns false once the pending (unterminated) line exceeds the limit;
	// the connection must then be answered with an error and closed.
	[[nodiscard]] bool append(std::string_view bytes);
	// Takes the next complete line (without '\n', a trailing '\r' dropped); false if none, or
	// if the next one is over the limit (it then stays pending: pending() > kMaxRequestLine).
	[[nodiscard]] bool next_line(std::string &line);
	// Bytes of an incomplete line waiting for its '\n'.
	[[nodiscard]] size_t pending() const { return buf_.size() - pos_; }

private:
	std::string buf_;
	size_t pos_ = 0;      // start of the unconsumed part
	size_t scanned_ = 0;  // bytes after pos_ known to hold no '\n'
};

}  // namespace kvfdp::daemon
