// Replays the control-protocol fuzz corpus (tests/kvfdpd/fuzz_corpus: malformed JSON,
// oversized lines, deep nesting, invalid UTF-8, wrong types, NUL bytes, pipelined lines)
// through check_control_input: every input gets well-formed replies and nothing throws.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/kvfdpd/fuzz_control.hpp"
#include "kvfdpd/daemon/ctl/control_proto.hpp"

namespace fs = std::filesystem;

namespace {

// "" or why input failed, exceptions included.
std::string run(const std::string &input)
{
	try {
		return kvfdp::test::check_control_input(input);
	} catch (const std::exception &e) {
		return std::string("threw: ") + e.what();
	} catch (...) {
		return "threw a non-std exception";
	}
}

}  // namespace

TEST_CASE("control fuzz corpus: every seed gets a well-formed reply, nothing throws")
{
	const fs::path dir = KVFDP_FUZZ_CORPUS_DIR;
	REQUIRE_MESSAGE(fs::is_directory(dir), "corpus missing: " << dir.string());
	size_t n = 0;
	for (const auto &e : fs::directory_iterator(dir)) {
		if (!e.is_regular_file())
			continue;
		std::ifstream f(e.path(), std::ios::binary);
		const std::string input((std::istreambuf_iterator<char>(f)),
					std::istreambuf_iterator<char>());
		INFO("seed ", e.path().filename().string());
		CHECK(run(input) == "");
		n++;
	}
	CHECK(n >= 30);
}

TEST_CASE("control fuzz: generated extremes")
{
	using kvfdp::daemon::kMaxRequestLine;
	// Nesting as deep as a line allows, closed and unclosed, arrays and objects.
	CHECK(run(std::string(kMaxRequestLine, '[')) == "");
	CHECK(run(std::string(kMaxRequestLine / 2, '[') + std::string(kMaxRequestLine / 2, ']')) ==
	      "");
	std::string obj;
	while (obj.size() + 6 < kMaxRequestLine)
		obj += "{\"a\":";
	CHECK(run(obj) == "");
	// At the limit, one over, and an over-limit line after a good one.
	CHECK(run(std::string(kMaxRequestLine, ' ') + "\n") == "");
	CHECK(run(std::string(kMaxRequestLine + 1, ' ') + "\n") == "");
	CHECK(run("{\"cmd\":\"status\"}\n" + std::string(3 * kMaxRequestLine, 'x')) == "");
	// Every single byte, and every byte inside a cmd string.
	for (int c = 0; c < 256; c++) {
		const std::string b(1, static_cast<char>(c));
		CHECK(run(b) == "");
		CHECK(run("{\"cmd\":\"" + b + "\"}\n") == "");
	}
}

TEST_CASE("control fuzz: the checker rejects what it must")
{
	using kvfdp::daemon::kMaxRequestLine;
	using kvfdp::test::check_framing;
	using kvfdp::test::check_reply;
	// Replies: each way a reply can be malformed is caught.
	CHECK(check_reply("{\"ok\":true}\n") == "");
	CHECK(check_reply("{\"ok\":false,\"error\":\"bad\"}\n") == "");
	CHECK(check_reply("") != "");
	CHECK(check_reply("{\"ok\":true}") != "");                   // no newline
	CHECK(check_reply("{\"ok\":true}\n{\"ok\":true}\n") != "");  // two lines
	CHECK(check_reply("[true]\n") != "");                        // not an object
	CHECK(check_reply("{\"ok\":tru\n") != "");                   // not JSON
	CHECK(check_reply("{\"cmd\":\"status\"}\n") != "");          // no "ok"
	CHECK(check_reply("{\"ok\":1}\n") != "");                    // "ok" not a boolean
	CHECK(check_reply("{\"ok\":false}\n") != "");                // an error without a message
	CHECK(check_reply("{\"ok\":false,\"error\":\"\"}\n") != "");
	CHECK(check_reply("{\"ok\":false,\"error\":7}\n") != "");
	// Framing: an over-limit line, from either framing, and framings that disagree.
	const std::vector<std::string> good{"a", "b"};
	CHECK(check_framing(good, true, good, true) == "");
	const std::string over(kMaxRequestLine + 1, 'x');
	CHECK(check_framing({over}, true, {over}, true).find("over the limit") !=
	      std::string::npos);
	CHECK(check_framing(good, true, {"a", over}, false).find("over the limit") !=
	      std::string::npos);
	CHECK(check_framing(good, true, {"a", "c"}, true).find("depends on the read size") !=
	      std::string::npos);
	CHECK(check_framing(good, true, {"a"}, true).find("depends on the read size") !=
	      std::string::npos);
	CHECK(check_framing({"a", "b"}, false, {"c"}, false).find("depends on the read size") !=
	      std::string::npos);
	// A framing that hit the limit earlier may hold fewer lines, never different ones.
	CHECK(check_framing(good, true, {"a"}, false) == "");
	// The whole property on real input: every reply well-formed, at and over the limit.
	CHECK(run("{\"cmd\":\"status\"}\n{\"cmd\":\"files\",\"limit\":0}\n") == "");
	CHECK(run(std::string(kMaxRequestLine + 1, 'y') + "\n{\"cmd\":\"status\"}\n") == "");
}
