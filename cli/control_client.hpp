// A client of kvfdpd's control socket: one JSON request line, one JSON reply line
// ({"ok":true,"data":...} or {"ok":false,"error":"..."}), see docs/control.md.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.hpp"
#include "proto/twin_window.hpp"

namespace kvfdp::cli {

// Why a daemon call failed, which decides the exit code and the hint.
enum class DaemonFailure {
	unreachable,  // no socket, nobody listening: the daemon does not run
	denied,       // the socket exists but we may not connect
	protocol,     // the reply was not the JSON line we expect, or timed out
	refused,      // {"ok":false,"error":...}
};

struct DaemonError {
	DaemonFailure kind = DaemonFailure::protocol;
	std::string message;  // one line, with a hint of what to do
};

// Either the reply's "data" or a DaemonError.
struct DaemonReply {
	bool ok = false;
	nlohmann::json data;
	DaemonError error;
};

// Sends {"cmd":cmd} (plus args' members) to the socket at path and returns the reply's
// data. Waits at most timeout_ms for the connection and the reply.
[[nodiscard]] DaemonReply daemon_call(const std::string &path, const std::string &cmd,
				      const nlohmann::json &args = nlohmann::json::object(),
				      int timeout_ms = 5000);

// kvfdpd's twin window page by page (docs/control.md, twin_window), each page from ask (one
// twin_window request's reply): from the oldest record held up to the newest as of the first
// page. Records overwritten before their page was read are counted in out.dropped. False, with
// error, when a request fails.
[[nodiscard]] bool
fetch_twin_window(const std::function<DaemonReply(const proto::TwinWindowRequest &)> &ask,
		  proto::TwinWindow &out, DaemonError &error);

// True when something accepts connections at path (a cheap probe for "is kvfdpd up?").
[[nodiscard]] bool daemon_reachable(const std::string &path);

}  // namespace kvfdp::cli
