// kvfdpd's control-request handlers: one request line in, one reply line out.
#pragma once

#include <string>
#include <string_view>

#include "kvfdpd/daemon/ctl/daemon_state.hpp"

namespace kvfdp::daemon {

// Answers one control-socket request line (docs/control.md) from the running daemon.
[[nodiscard]] std::string handle_control_line(State &s, std::string_view line);

}  // namespace kvfdp::daemon
