// The property the control-protocol fuzzer and its corpus replay test check: any byte stream
// a client may send, framed by LineBuffer and parsed by parse_request, gets one well-formed
// reply per line (an error or a valid request), and framing does not depend on read sizes.
#pragma once

#include <string>
#include <string_view>

namespace kvfdp::test {

// Runs input through the control protocol as kvfdpd's socket does (LineBuffer, then
// parse_request / get_positive_arg / reply_* for each line; the state-free part of
// handle_line). Returns "" when every reply is one JSON line {"ok":true,...} or
// {"ok":false,"error":"..."}, else what went wrong. Exceptions propagate (a finding).
[[nodiscard]] std::string check_control_input(std::string_view input);

} // namespace kvfdp::test
