// Runs the real `kvfdp simulate` binary: the done-when check (analytic WAF at OP
// 0.28 and 0.07 with the default geometry), the table, and exit 2 for bad option values.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "model/ftl/theory.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_files.hpp"

#ifndef KVFDP_BIN
#error "KVFDP_BIN must name the kvfdp binary"
#endif

namespace {

using kvfdp::test::TempDir;
using Run = kvfdp::test::CommandRun;

// Runs `kvfdp args` in a directory of its own.
Run run_kvfdp(const std::string &args)
{
	TempDir dir;
	return kvfdp::test::run_command(dir, std::string(KVFDP_BIN) + " " + args);
}

double measured_waf(double op)
{
	const Run r = run_kvfdp("simulate --workload uniform --op " + std::to_string(op) +
				" --placement none -o json");
	REQUIRE(r.rc == 0);
	const auto j = nlohmann::json::parse(r.out, nullptr, false);
	REQUIRE_FALSE(j.is_discarded());
	REQUIRE(j["runs"].size() == 1);
	CHECK(j["runs"][0]["placement"] == "none");
	CHECK(j["runs"][0]["host_bytes"].get<uint64_t>() > 0);
	return j["runs"][0]["waf"].get<double>();
}

}  // namespace

TEST_CASE("simulate: the defaults reproduce the analytic greedy WAF at OP 0.28 and 0.07")
{
	for (double op : {0.28, 0.07}) {
		const double waf = measured_waf(op);
		const double theory = kvfdp::model::greedy_uniform_waf(op);
		std::printf(
			"kvfdp simulate --workload uniform --op %.2f --placement none: WAF %.3f, "
			"analytic %.3f (%+.1f%%)\n",
			op, waf, theory, (waf / theory - 1) * 100);
		CHECK(waf == doctest::Approx(theory).epsilon(0.10));
	}
}

TEST_CASE("simulate: a bare hotcold run prints the table with placement below none")
{
	const Run r = run_kvfdp("simulate --workload hotcold");
	REQUIRE(r.rc == 0);
	for (const char *col :
	     {"PLACEMENT", "HOST BYTES", "MEDIA BYTES", "WAF", "GC RUNS", "RELOCATED BYTES"})
		CHECK(r.out.find(col) != std::string::npos);
	CHECK(r.out.find("\nnone ") != std::string::npos);
	CHECK(r.out.find("\nhint ") != std::string::npos);
	const Run j = run_kvfdp("simulate --workload hotcold --capacity 1GiB -o json");
	REQUIRE(j.rc == 0);
	const auto js = nlohmann::json::parse(j.out);
	// none, hint, then writer and learned (which hotcold supports because it has hint).
	REQUIRE(js["runs"].size() == 4);
	CHECK(js["runs"][2]["placement"] == "writer");
	CHECK(js["runs"][3]["placement"] == "learned");
	CHECK(js["runs"][1]["waf"].get<double>() < js["runs"][0]["waf"].get<double>());
	CHECK(js["runs"][1]["waf"].get<double>() < 1.05);
	// One writer: writer placement is none. The learner splits hot from cold (9x apart).
	CHECK(js["runs"][2]["waf"].get<double>() == js["runs"][0]["waf"].get<double>());
	CHECK(js["runs"][3]["waf"].get<double>() < js["runs"][0]["waf"].get<double>());
	CHECK(js["runs"][3]["learned"]["groups"].get<int>() == 2);
}

TEST_CASE("simulate: --learned-grouping and --learned-shadows set up the learner")
{
	// A FIFO worker beside an LRU worker touched 8 times, equal mean lifetimes, one class each
	// (docs/placement.md, the order split's table): the lifetime ratio alone cannot part them,
	// the default grouping parts them by class.
	const std::string pair =
		"simulate --workload slots --slot-objects 4MiB,4MiB --slot-touches 0,8 "
		"--slot-classes short,long --capacity 4GiB --op 0.07 --ru-size 16MiB "
		"--placement learned -o json";
	auto learned = [](const Run &r) {
		REQUIRE(r.rc == 0);
		const auto j = nlohmann::json::parse(r.out, nullptr, false);
		REQUIRE_FALSE(j.is_discarded());
		REQUIRE(j["runs"].size() == 1);
		return j["runs"][0];
	};
	const auto order = learned(run_kvfdp(pair));
	const auto lifetime = learned(run_kvfdp(pair + " --learned-grouping lifetime"));
	CHECK(order["learned"]["groups"] == 2);
	CHECK(lifetime["learned"]["groups"] == 1);
	CHECK(lifetime["waf"].get<double>() > order["waf"].get<double>());
	CHECK(learned(run_kvfdp(pair + " --learned-grouping order"))["waf"] == order["waf"]);
	// Only the shadows report a choice.
	CHECK_FALSE(order["learned"].contains("choice"));
	const auto shadows = learned(run_kvfdp(pair + " --learned-shadows"));
	CHECK(shadows["learned"].contains("choice"));
	CHECK(shadows["learned"].contains("choice_switches"));
}

TEST_CASE("simulate: bad option values exit 2 with one line naming the option")
{
	const char *cases[][2] = {
		{"--op abc", "--op"},
		{"--op 0", "--op"},
		{"--capacity 1XB", "--capacity"},
		{"--util 1.5", "--util"},
		{"--handles 0", "--handles"},
		{"--placement sometimes", "--placement"},
		{"--workload uniform --placement hint", "--placement"},
		{"--workload nope", "--workload"},
		{"-o yaml", "--output"},
		{"--gc random", "--gc"},
		{"--ru-size 3KiB", "model"},
		{"--ruh-types sometimes", "--ruh-types"},
		{"--learned-grouping sometimes", "--learned-grouping"},
		{"--ruh-types initially,persistently", "--ruh-types"},
		{"--capacity 4GiB --ru-size 64MiB --op 0.03", "smallest OP that runs is 0.047"},
		{"--workload slots --slot-touches 1,2", "--slot-touches"},
		{"--workload slots --capacity 256MiB --kv-scale 1", "slot worker long_context"},
		{"--workload slots --slot-windows 0.5,0.5,0.1,0.1,0.1,0.1,0.1,0.1,0.1",
		 "slot worker long_context"},
	};
	for (const auto &c : cases) {
		CAPTURE(c[0]);
		const Run r = run_kvfdp(std::string("simulate ") + c[0]);
		CHECK(r.rc == 2);
		CHECK(r.out.empty());
		CHECK(r.err.find(c[1]) != std::string::npos);
		CHECK(r.err.find('\n') == r.err.size() - 1);  // exactly one line
	}
}

TEST_CASE(
	"simulate: a drive-like geometry runs, and so does the slot store with persistent handles")
{
	// 64 MiB RUs on 4 GiB at OP 0.12 with 8 handles: 71 RUs, as a 16 GiB RU on 960 GiB.
	Run r = run_kvfdp(
		"simulate --capacity 4GiB --ru-size 64MiB --op 0.12 --writes 1 --placement none -o json");
	CHECK(r.rc == 0);
	r = run_kvfdp(
		"simulate --workload slots --capacity 1GiB --ru-size 4MiB --op 0.12 --writes 1 "
		"--ruh-types persistently --placement writer -o json");
	CAPTURE(r.out);
	REQUIRE(r.rc == 0);
	const auto j = nlohmann::json::parse(r.out);
	const auto &run = j["runs"][0];
	CHECK(run["workers"].size() == 9);
	// Nine writers on eight handles: the ninth shares the last.
	CHECK(run["writers"] == 9);
	CHECK(run["waf"].get<double>() >= 1.0);
}

TEST_CASE("simulate: a device as a trace, and a trace that writes nothing, are said plainly")
{
	for (const char *opt : {"--kv-trace", "--blk-trace"}) {
		const Run r = run_kvfdp(std::string("simulate ") + opt + " /dev/zero");
		CAPTURE(r.err);
		CHECK(r.rc == 2);
		CHECK(r.out.empty());
		CHECK(r.err.find("/dev/zero is a character device") != std::string::npos);
		CHECK(r.err.find("Input/output error") == std::string::npos);
		CHECK(r.err.find('\n') == r.err.size() - 1);
	}
	TempDir d;
	const std::string path = d.path + "/discards.csv";
	kvfdp::test::write_file(path, "t_us,op,slba,nlb,class,writer\n0,D,0,8,0,1\n");
	const Run r =
		run_kvfdp("simulate --blk-trace " + path + " --capacity 64MiB --placement none");
	CAPTURE(r.out);
	CHECK(r.rc == 0);
	CHECK(r.out.find("n/a") != std::string::npos);
	CHECK(r.out.find("0.000") == std::string::npos);
}
