// kvfdpd control protocol: request parsing, reply framing, the 64 KiB line limit, fuzzing.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "kvfdpd/daemon/ctl/control_proto.hpp"

using namespace kvfdp::daemon;
using nlohmann::json;

TEST_CASE("control: a request names its command")
{
	Request r;
	std::string err;
	REQUIRE(parse_request(R"({"cmd":"status"})", r, err));
	CHECK(r.cmd == "status");
	REQUIRE(parse_request(R"({"cmd":"files","limit":5,"extra":[1,2]})", r, err));
	CHECK(r.cmd == "files");
	uint64_t limit = 1000;
	CHECK(get_positive_arg(r, "limit", limit, err));
	CHECK(limit == 5);
}

TEST_CASE("control: bad requests get one-line errors")
{
	Request r;
	std::string err;
	CHECK(!parse_request("status", r, err));
	CHECK(err.rfind("malformed request: ", 0) == 0);
	CHECK(!parse_request("[1,2]", r, err));
	CHECK(err.rfind("malformed request: ", 0) == 0);
	CHECK(!parse_request(R"({"command":"status"})", r, err));
	CHECK(err.rfind("request needs a string \"cmd\"", 0) == 0);
	CHECK(!parse_request(R"({"cmd":7})", r, err));
	CHECK(err.rfind("request needs a string \"cmd\"", 0) == 0);
	REQUIRE(parse_request(R"({"cmd":"files","limit":-3})", r, err));
	uint64_t limit = 1;
	CHECK(!get_positive_arg(r, "limit", limit, err));
	CHECK(err == "files.limit must be a positive integer");
	CHECK(!parse_request(std::string(kMaxRequestLine + 1, ' '), r, err));
	CHECK(err.find("exceeds") != std::string::npos);
}

TEST_CASE("control: replies are single JSON lines")
{
	const std::string ok = reply_ok(json{{"a", 1}});
	CHECK(ok == "{\"ok\":true,\"data\":{\"a\":1}}\n");
	const std::string e = reply_error("two\nlines");
	CHECK(e.find('\n') == e.size() - 1);
	CHECK(e.rfind("{\"ok\":false,\"error\":", 0) == 0);
	json j = json::parse(e);
	CHECK(j["ok"] == false);
	CHECK(j["error"] == "two lines");
	// Invalid UTF-8 (a path from the system) is replaced by U+FFFD, still one JSON line.
	const std::string bad = reply_ok(json{{"p", std::string("a\xff\xfe")}});
	CHECK(bad.find('\n') == bad.size() - 1);
	json b = json::parse(bad);
	CHECK(b["ok"] == true);
	CHECK(b["data"]["p"] == "a\xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("control: line buffer splits lines across reads")
{
	LineBuffer b;
	std::string line;
	CHECK(b.append("{\"cmd\":"));
	CHECK(!b.next_line(line));
	CHECK(b.pending() == 7);
	CHECK(b.append("\"status\"}\r\n{\"cmd\":\"ruh\"}\n{\"cm"));
	REQUIRE(b.next_line(line));
	CHECK(line == "{\"cmd\":\"status\"}");
	REQUIRE(b.next_line(line));
	CHECK(line == "{\"cmd\":\"ruh\"}");
	CHECK(!b.next_line(line));
	CHECK(b.pending() == 4);
}

TEST_CASE("control: a line over 64 KiB is refused, one at the limit is not")
{
	LineBuffer a;
	CHECK(a.append(std::string(kMaxRequestLine, 'x')));
	CHECK(a.append("\n"));
	std::string line;
	REQUIRE(a.next_line(line));
	CHECK(line.size() == kMaxRequestLine);

	LineBuffer b;
	bool ok = true;
	for (int i = 0; i < 80 && ok; i++)
		ok = b.append(std::string(1024, 'y'));
	CHECK(!ok);
}

// Random and mutated inputs: the parser either accepts an object with a string cmd or
// returns a one-line error; an accepted request's reply carries it back unchanged, and
// framing yields one line per '\n'.
TEST_CASE("control: fuzzed requests are accepted whole or refused with one line")
{
	std::mt19937_64 rng(12345);
	const std::string seeds[] = {R"({"cmd":"status"})",
				     R"({"cmd":"files","limit":10})",
				     R"({"cmd":"ruh","x":{"y":[1,2,{"z":null}]}})",
				     "[]",
				     "\"str\"",
				     R"({"cmd":"\u0000\ud800"})"};
	const char alphabet[] = "{}[]\":,0123456789.eE+-truefalsnl\\u \t\r\x80\xff";
	size_t accepted = 0, rejected = 0;
	for (int iter = 0; iter < 20000; iter++) {
		std::string s;
		if (iter % 2) {
			s = seeds[rng() % std::size(seeds)];
			const int edits = 1 + static_cast<int>(rng() % 4);
			for (int e = 0; e < edits && !s.empty(); e++) {
				const size_t pos = rng() % s.size();
				switch (rng() % 3) {
				case 0: s[pos] = alphabet[rng() % (sizeof(alphabet) - 1)]; break;
				case 1: s.erase(pos, 1); break;
				default:
					s.insert(pos, 1, alphabet[rng() % (sizeof(alphabet) - 1)]);
					break;
				}
			}
		} else {
			const size_t len = rng() % 64;
			for (size_t i = 0; i < len; i++)
				s += static_cast<char>(rng() & 0xff);
		}
		Request r;
		std::string err;
		bool ok = false;
		REQUIRE_NOTHROW(ok = parse_request(s, r, err));
		if (ok) {
			accepted++;
			REQUIRE(r.args.is_object());
			REQUIRE(r.args.contains("cmd"));
			CHECK(r.args["cmd"] == r.cmd);
			// limit: accepted exactly when absent or a positive integer, and then read as it is.
			uint64_t v = 7;
			std::string aerr;
			const auto lim = r.args.find("limit");
			const bool valid = lim == r.args.end() ||
					   (lim->is_number_unsigned() && lim->get<uint64_t>() > 0);
			CHECK(get_positive_arg(r, "limit", v, aerr) == valid);
			if (!valid)
				CHECK(aerr == r.cmd + ".limit must be a positive integer");
			else
				CHECK(v == (lim == r.args.end() ? 7 : lim->get<uint64_t>()));
			// The reply is one line that parses back to the request.
			const std::string reply = reply_ok(r.args);
			CHECK(reply.find('\n') == reply.size() - 1);
			CHECK(json::parse(reply)["data"] == r.args);
		} else {
			rejected++;
			CHECK(!err.empty());
			CHECK(err.find('\n') == std::string::npos);
			const json e = json::parse(reply_error(err));
			CHECK(e["ok"] == false);
			CHECK(e["error"] == err);
		}
		LineBuffer b;
		std::string line;
		CHECK(b.append(s));
		size_t lines = 0;
		while (b.next_line(line)) {
			CHECK(line.find('\n') == std::string::npos);
			lines++;
		}
		CHECK(lines == static_cast<size_t>(std::count(s.begin(), s.end(), '\n')));
	}
	CHECK(accepted > 0);
	CHECK(rejected > 0);
}

TEST_CASE("control: only root and the admin group may send the requests that change state")
{
	const std::optional<uint32_t> admin = 994;
	CHECK(is_admin(0, 0, {}, std::nullopt));  // root, with or without the group
	CHECK(is_admin(0, 100, {}, admin));
	CHECK(is_admin(1000, 994, {}, admin));          // the primary group
	CHECK(is_admin(1000, 1000, {27, 994}, admin));  // a supplementary group
	CHECK(!is_admin(1000, 1000, {27, 995}, admin));
	CHECK(!is_admin(1000, 994, {994}, std::nullopt));  // no admin group on the host: root only
	CHECK(!is_admin(UINT32_MAX, 1000, {}, admin));     // credentials unknown

	const Peer member{1000, false};
	const Peer admin_peer{1000, true};
	for (const char *cmd : {"stop", "reload"}) {
		CHECK(access_refusal(cmd, admin_peer).empty());
		const std::string why = access_refusal(cmd, member);
		CHECK(why == std::string(cmd) +
				     " needs root or membership of group kvfdp-admin (usermod -aG "
				     "kvfdp-admin USER, then log in again); nothing was changed");
		CHECK(why.find('\n') == std::string::npos);
	}
	for (const char *cmd :
	     {"status", "ruh", "files", "policy", "stats", "metrics", "twin_window", "no-such-cmd"})
		CHECK(access_refusal(cmd, member).empty());
}
