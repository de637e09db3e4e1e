// The property the control-protocol fuzzer and its corpus replay test check: any byte stream
// a client may send, framed by LineBuffer and parsed by parse_request, gets one well-formed
// reply per line (an error or a valid request), and framing does not depend on read sizes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvfdp::test {

// Runs input through the control protocol as kvfdpd's socket does (LineBuffer, then
// parse_request / get_positive_arg / reply_* for each line; the state-free part of
// handle_line). Returns "" when every reply is one JSON line {"ok":true,...} or
// {"ok":false,"error":"..."}, else what went wrong. Exceptions propagate (a finding).
[[nodiscard]] std::string check_control_input(std::string_view input);

// The parts of the property, exposed so that a test can show each one rejects bad data.
// "" when reply is exactly one line holding a JSON object with a boolean "ok" (and a
// non-empty string "error" when ok is false), else why not.
[[nodiscard]] std::string check_reply(const std::string &reply);
// "" when the lines LineBuffer returned for one input, framed as one read (whole) and as small
// reads (pieces), are each within kMaxRequestLine and agree, else why not. *_ok: the framing
// ended without hitting the pending-line limit.
[[nodiscard]] std::string check_framing(const std::vector<std::string> &whole, bool whole_ok,
					const std::vector<std::string> &pieces, bool pieces_ok);

}  // namespace kvfdp::test
