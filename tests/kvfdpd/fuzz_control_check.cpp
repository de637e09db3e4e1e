// check_control_input: the control protocol's no-crash / one-reply-per-line property.
#include "tests/kvfdpd/fuzz_control.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "proto/twin_window.hpp"
#include "kvfdpd/daemon/ctl/control_proto.hpp"

namespace kvfdp::test {

namespace {

using daemon::kMaxRequestLine;
using nlohmann::json;

}  // namespace

std::string check_reply(const std::string &reply)
{
	if (reply.empty() || reply.back() != '\n' || reply.find('\n') != reply.size() - 1)
		return "reply is not exactly one line";
	const json j = json::parse(reply.begin(), reply.end() - 1, nullptr, false);
	if (j.is_discarded() || !j.is_object())
		return "reply is not a JSON object: " + reply.substr(0, 200);
	const auto ok = j.find("ok");
	if (ok == j.end() || !ok->is_boolean())
		return "reply has no boolean \"ok\"";
	if (!ok->get<bool>()) {
		const auto e = j.find("error");
		if (e == j.end() || !e->is_string() || e->get_ref<const std::string &>().empty())
			return "error reply has no message";
	}
	return "";
}

namespace {

// The state-free part of kvfdpd's handle_line, as a client outside kvfdp-admin sends it:
// parse, the refusal of a request that changes state (the control server's), the files.limit
// and twin_window arguments, the unknown-command reply; a known command answers with its name
// (its real data needs a running daemon).
std::string reply_for(std::string_view line)
{
	daemon::Request req;
	std::string err;
	if (!daemon::parse_request(line, req, err))
		return daemon::reply_error(err);
	if (const std::string why = daemon::access_refusal(req.cmd, daemon::Peer{1000, false});
	    !why.empty())
		return daemon::reply_error(why);
	uint64_t limit = 1000;
	if (!daemon::get_positive_arg(req, "limit", limit, err))
		return daemon::reply_error(err);
	proto::TwinWindowRequest page;
	if (req.cmd == "twin_window" && !proto::parse_twin_window_request(req.args, page, err))
		return daemon::reply_error(err);
	static constexpr std::string_view kKnown[] = {"status", "ruh",     "files",
						      "policy", "reload",  "stop",
						      "stats",  "metrics", "twin_window"};
	if (std::find(std::begin(kKnown), std::end(kKnown), req.cmd) == std::end(kKnown))
		return daemon::reply_error(
			"unknown cmd '" + req.cmd.substr(0, 64) +
			"'; known: status, ruh, files, policy, reload, stop, stats, metrics, twin_window");
	return daemon::reply_ok(json{{"cmd", req.cmd}, {"limit", limit}});
}

// Frames input with appends of chunk bytes, keeping every line LineBuffer returns (an
// over-limit one too: check_framing judges it); stops when append refuses (the server then
// answers with an error and closes). Returns false when append refused.
bool frame(std::string_view input, size_t chunk, std::vector<std::string> &lines)
{
	daemon::LineBuffer b;
	std::string line;
	for (size_t off = 0; off < input.size(); off += chunk) {
		const bool appended = b.append(input.substr(off, chunk));
		while (b.next_line(line))
			lines.push_back(line);
		if (!appended)
			return false;
	}
	return true;
}

}  // namespace

std::string check_framing(const std::vector<std::string> &whole, bool whole_ok,
			  const std::vector<std::string> &pieces, bool pieces_ok)
{
	for (const auto *v : {&whole, &pieces})
		for (const std::string &l : *v)
			if (l.size() > kMaxRequestLine)
				return "LineBuffer returned a line over the limit (" +
				       std::to_string(l.size()) + " bytes)";
	if (whole_ok && pieces_ok && whole != pieces)
		return "LineBuffer framing depends on the read size";
	// The limit may be hit earlier by one framing than the other, never on the complete
	// lines both produced before it.
	const size_t common = std::min(whole.size(), pieces.size());
	if (!std::equal(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(common),
			pieces.begin()))
		return "LineBuffer framing depends on the read size";
	return "";
}

std::string check_control_input(std::string_view input)
{
	// The whole input as one line, as if it held no '\n'.
	std::string why = check_reply(reply_for(input));
	if (!why.empty())
		return "as one line: " + why;
	// Error texts quote what the client sent: any bytes must still give one JSON line.
	if (!check_reply(daemon::reply_error("bad: " + std::string(input))).empty())
		return "reply_error of the input is not one JSON line";

	// Framed as one read and as small reads (size from the first byte): same lines.
	std::vector<std::string> whole, pieces;
	const bool whole_ok = frame(input, std::max<size_t>(input.size(), 1), whole);
	const size_t chunk = input.empty() ? 1 : 1 + static_cast<uint8_t>(input[0]) % 17;
	const bool pieces_ok = frame(input, chunk, pieces);
	why = check_framing(whole, whole_ok, pieces, pieces_ok);
	if (!why.empty())
		return why;
	for (const std::string &l : whole) {
		why = check_reply(reply_for(l));
		if (!why.empty())
			return "line: " + why;
	}
	return "";
}

}  // namespace kvfdp::test
