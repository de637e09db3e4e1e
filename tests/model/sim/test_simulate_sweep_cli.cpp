// Runs the real `kvfdp simulate --sweep` (and --plot): the table and JSON of a sweep, exit 2
// with one line naming a bad spec, and an unwritable plot path: one line, exit 1, the table
// still printed.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"
#include "tests/support/temp_files.hpp"

#ifndef KVFDP_BIN
#error "KVFDP_BIN must name the kvfdp binary"
#endif

namespace {

using Run = kvfdp::test::CommandRun;

// Runs `kvfdp args` in dir.
Run run_kvfdp(const kvfdp::test::TempDir &dir, const std::string &args)
{
	return kvfdp::test::run_command(dir, std::string(KVFDP_BIN) + " " + args);
}

using kvfdp::test::line_count;

const std::string kHotcold = "simulate --workload hotcold --capacity 256MiB ";

}  // namespace

TEST_CASE("simulate --sweep util: one row per value, one WAF column per placement")
{
	kvfdp::test::TempDir dir;
	const Run r = run_kvfdp(dir, kHotcold + "--sweep util=0.80:1.00:0.10");
	REQUIRE(r.rc == 0);
	CHECK(r.out.rfind("UTIL        none      hint    writer   learned\n", 0) == 0);
	CHECK(line_count(r.out) == 1 + 3 + 1);
	for (const char *row : {"\n0.800 ", "\n0.900 ", "\n1.000 "})
		CHECK(r.out.find(row) != std::string::npos);
	// hotcold's none gets worse with use; the list picks placements, in its order.
	const Run l = run_kvfdp(
		dir, kHotcold + "--sweep util=0.80:1.00:0.20 --placement learned,none -o json");
	REQUIRE(l.rc == 0);
	const auto j = nlohmann::json::parse(l.out);
	CHECK(j["sweep"]["key"] == "util");
	REQUIRE(j["points"].size() == 2);
	REQUIRE(j["points"][0]["runs"].size() == 2);
	CHECK(j["points"][0]["runs"][0]["placement"] == "learned");
	CHECK(j["points"][0]["runs"][1]["placement"] == "none");
	CHECK(j["points"][0]["util"] == doctest::Approx(0.8));
	CHECK(j["points"][1]["runs"][1]["waf"].get<double>() >
	      j["points"][0]["runs"][1]["waf"].get<double>());
}

TEST_CASE("simulate --sweep op: WAF falls as OP grows")
{
	kvfdp::test::TempDir dir;
	const Run r =
		run_kvfdp(dir, kHotcold + "--sweep op=0.07:0.28:0.21 --placement none -o json");
	REQUIRE(r.rc == 0);
	const auto j = nlohmann::json::parse(r.out);
	REQUIRE(j["points"].size() == 2);
	CHECK(j["points"][1]["op"] == doctest::Approx(0.28));
	CHECK(j["points"][0]["runs"][0]["waf"].get<double>() >
	      j["points"][1]["runs"][0]["waf"].get<double>());
}

TEST_CASE("simulate --sweep: a bad spec or combination is one line naming it, exit 2")
{
	kvfdp::test::TempDir dir;
	const char *bad[] = {"--sweep foo=0.8:1:0.1",
			     "--sweep util=1:0.8:0.1",
			     "--sweep util=0.8:1:0",
			     "--sweep util=0.8:1.2:0.1",
			     "--sweep util=0.8:x:0.1",
			     "--sweep op=0:0.2:0.1",
			     "--sweep util=0.8:1:0.1 --util 0.9",
			     "--sweep op=0.1:0.2:0.1 --op 0.2",
			     "--sweep util=0.8:1:0.1 --ruh",
			     "--plot x.svg",
			     "--sweep op=0.01:0.28:0.27 --ru-size 8MiB",
			     "--sweep util=0.8:1:0.1 --placement none,bogus"};
	for (const char *b : bad) {
		CAPTURE(std::string(b));
		const Run r = run_kvfdp(dir, kHotcold + b);
		CAPTURE(r.err);
		CHECK(r.rc == 2);
		CHECK(r.out.empty());
		CHECK(line_count(r.err) == 1);
		CHECK(r.err.rfind("kvfdp simulate: --", 0) == 0);
		const std::string arg = std::string(b).substr(std::string(b).find(' ') + 1);
		const std::string spec = arg.substr(0, arg.find(' '));
		if (std::string(b).rfind("--sweep", 0) == 0 &&
		    std::string(b).find("--placement") == std::string::npos)
			CHECK(r.err.find("'" + spec + "'") != std::string::npos);
	}
}

TEST_CASE("simulate --plot: an unwritable path is one line and exit 1, after the whole table")
{
	kvfdp::test::TempDir dir;
	const std::string svg = dir.path + "/no/such/dir/waf.svg";
	const Run r = run_kvfdp(dir, kHotcold + "--sweep util=0.90:1.00:0.10 --plot " + svg);
	CHECK(r.rc == 1);
	CHECK(r.out.rfind("UTIL ", 0) == 0);
	CHECK(line_count(r.out) == 1 + 2 + 1);
	CHECK(line_count(r.err) == 1);
	CHECK(r.err.find("--plot: cannot write " + svg) != std::string::npos);
	CHECK(r.err.find("No such file or directory") != std::string::npos);
	// A writable one: an SVG with one polyline per placement.
	const Run ok = run_kvfdp(
		dir, kHotcold + "--sweep util=0.90:1.00:0.10 --placement none,hint --plot " +
			     dir.path + "/waf.svg");
	REQUIRE(ok.rc == 0);
	FILE *f = std::fopen((dir.path + "/waf.svg").c_str(), "r");
	REQUIRE(f != nullptr);
	std::string text;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		text.append(buf, n);
	std::fclose(f);
	size_t polylines = 0;
	for (size_t p = text.find("<polyline"); p != std::string::npos;
	     p = text.find("<polyline", p + 1))
		polylines++;
	CHECK(polylines == 2);
	CHECK(text.find("workload hotcold, capacity 256MiB, OP 0.28, RU size 1MiB, 8 handles") !=
	      std::string::npos);
}
