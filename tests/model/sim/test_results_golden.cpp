// Golden figures: a few rows of docs/RESULTS.md (the demo's two rows among them) are run
// with the command their row gives, and every WAF (and hit ratio) the row publishes must be
// what `kvfdp simulate` prints, to three decimals. Runs are deterministic, so a change to the
// model, a workload or the learner that moves a published figure fails here until the doc is
// updated in the same commit.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/temp_files.hpp"

#ifndef KVFDP_BIN
#error "KVFDP_BIN must name the kvfdp binary"
#endif
#ifndef KVFDP_RESULTS_MD
#error "KVFDP_RESULTS_MD must name docs/RESULTS.md"
#endif
#ifndef KVFDP_TRACE_GZ
#error "KVFDP_TRACE_GZ must name the embedded Mooncake trace"
#endif

namespace {

// The pinned rows, by their command (as the doc's command column writes it).
const char *const kPinned[] = {
	// the demo's single chunk store
	"kvfdp simulate --kv-trace mooncake-conversation.jsonl --kv-scale 1/256 --capacity 4GiB --op 0.07 --util 1 --ru-size 16MiB --placement all",
	// the demo's shared host
	"kvfdp simulate --workload host --kv-trace mooncake-conversation.jsonl --kv-scale 1/256 --capacity 4GiB --op 0.07 --util 1 --ru-size 16MiB --placement all",
	// the synthetic mix
	"kvfdp simulate --workload kv --kv-scale 1/256 --capacity 4GiB --op 0.28 --util 0.8 --ru-size 16MiB --placement all",
};

std::vector<std::string> cells(const std::string &line)
{
	std::vector<std::string> out;
	std::string cur;
	bool first = true;
	for (char c : line) {
		if (c == '|') {
			if (!first)
				out.push_back(cur);
			first = false;
			cur.clear();
			continue;
		}
		cur += c;
	}
	for (std::string &s : out) {
		while (!s.empty() && s.front() == ' ')
			s.erase(s.begin());
		while (!s.empty() && s.back() == ' ')
			s.pop_back();
	}
	return out;
}

std::string run(const std::string &cmd)
{
	std::string out;
	FILE *p = popen(cmd.c_str(), "r");
	REQUIRE(p != nullptr);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, p)) > 0)
		out.append(buf, n);
	const int st = pclose(p);
	REQUIRE_MESSAGE((WIFEXITED(st) && WEXITSTATUS(st) == 0), cmd);
	return out;
}

std::string three(double v)
{
	char b[32];
	std::snprintf(b, sizeof b, "%.3f", v);
	return b;
}

}  // namespace

TEST_CASE("golden: the pinned docs/RESULTS.md rows are what kvfdp simulate prints")
{
	std::ifstream in(KVFDP_RESULTS_MD);
	REQUIRE(in.good());
	std::vector<std::string> lines;
	for (std::string l; std::getline(in, l);)
		lines.push_back(l);

	const kvfdp::test::TempDir dir;
	const std::string &tmp = dir.path;
	run("gzip -dc '" + std::string(KVFDP_TRACE_GZ) + "' > '" + tmp +
	    "/mooncake-conversation.jsonl'");

	for (const char *pinned : kPinned) {
		const std::string pin = pinned;
		const std::string want = "`" + pin + "`";
		CAPTURE(pin);
		size_t row = lines.size(), header = lines.size();
		for (size_t i = 0; i < lines.size(); i++)
			if (lines[i].find(want) != std::string::npos &&
			    lines[i].rfind("|", 0) == 0) {
				row = i;
				break;
			}
		REQUIRE_MESSAGE(row < lines.size(),
				"docs/RESULTS.md has no table row with this command");
		for (size_t i = row; i-- > 0;)
			if (lines[i].rfind("|", 0) == 0 &&
			    lines[i].find("---") == std::string::npos &&
			    (i + 1 < lines.size() &&
			     lines[i + 1].find("---") != std::string::npos)) {
				header = i;
				break;
			}
		REQUIRE(header < row);
		const auto head = cells(lines[header]);
		const auto vals = cells(lines[row]);
		REQUIRE(head.size() == vals.size());

		const std::string out =
			run("cd '" + tmp + "' && " + KVFDP_BIN +
			    std::string(pinned).substr(std::string("kvfdp").size()) + " -o json");
		const auto js = nlohmann::json::parse(out);
		int checked = 0;
		for (size_t c = 0; c < head.size(); c++) {
			for (const auto &r : js["runs"]) {
				if (r["placement"] != head[c])
					continue;
				CHECK_MESSAGE(
					vals[c] == three(r["waf"].get<double>()),
					"docs/RESULTS.md says "
						<< head[c] << " " << vals[c] << ", simulate gives "
						<< three(r["waf"].get<double>())
						<< ": update the doc with the change that moved it");
				checked++;
			}
			if (head[c] == "hit ratio") {
				CHECK(vals[c] == three(js["runs"][0]["hit_ratio"].get<double>()));
				checked++;
			}
		}
		CHECK(checked >= 3);  // none, hint, oracle at least
	}
}
