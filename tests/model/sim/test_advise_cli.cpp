// Runs the real `kvfdp advise`: its recommendation meets the target and agrees with a direct
// `kvfdp simulate` at that setting (the shared host of docs/RESULTS.md at 7% OP, and the chunk
// store with its eviction orders); bad targets, sweep specs and --util are one line, exit 2; a
// target no setting meets is one line with the best found, exit 1. No WAF figure is pinned.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"
#include "tests/support/temp_files.hpp"

#ifndef KVFDP_BIN
#error "KVFDP_BIN must name the kvfdp binary"
#endif
#ifndef KVFDP_TRACE_GZ
#error "KVFDP_TRACE_GZ must name model/workload/data/mooncake-conversation.jsonl.gz"
#endif

using nlohmann::json;

namespace {

using Run = kvfdp::test::CommandRun;

// Runs `kvfdp args` in dir.
Run run_kvfdp(const kvfdp::test::TempDir &dir, const std::string &args)
{
	return kvfdp::test::run_command(dir, std::string(KVFDP_BIN) + " " + args);
}

using kvfdp::test::line_count;

// A directory holding mooncake-conversation.jsonl (unpacked from the repository's copy).
struct TraceDir {
	kvfdp::test::TempDir dir;
	TraceDir()
	{
		const std::string cmd = "gzip -dc '" + std::string(KVFDP_TRACE_GZ) + "' > '" +
					dir.path + "/mooncake-conversation.jsonl'";
		REQUIRE(std::system(cmd.c_str()) == 0);
	}
};

// `kvfdp advise source extra -o json`: it exits 0 with a recommendation within the target,
// and no higher utilisation of the sweep met the target.
json advise_json(const kvfdp::test::TempDir &dir, const std::string &source,
		 const std::string &extra)
{
	const Run a = run_kvfdp(dir, "advise " + source + " " + extra + " -o json");
	CAPTURE(a.err);
	REQUIRE(a.rc == 0);
	json j = json::parse(a.out);
	const json &rec = j["recommendation"];
	REQUIRE(rec.is_object());
	CHECK(rec["waf"].get<double>() <= j["target"].get<double>());
	for (const json &r : j["runs"])
		if (r["util"].get<double>() > rec["util"].get<double>())
			CHECK_FALSE(r["meets"].get<bool>());
	return j;
}

// `kvfdp sim_args -o json` in dir makes the run of advise's recommendation in j: the same
// placement, bytes, WAF (so within the target) and hit ratio.
void check_same_run(const kvfdp::test::TempDir &dir, const json &j, const std::string &sim_args)
{
	const json &rec = j["recommendation"];
	CAPTURE(sim_args);
	const Run s = run_kvfdp(dir, sim_args + " -o json");
	CAPTURE(s.err);
	REQUIRE(s.rc == 0);
	const json out = json::parse(s.out);
	REQUIRE(out["runs"].size() == 1);
	const json &r = out["runs"][0];
	CHECK(r["placement"] == rec["placement"]);
	CHECK(r["host_bytes"] == rec["host_bytes"]);
	CHECK(r["media_bytes"] == rec["media_bytes"]);
	CHECK(r["waf"].get<double>() == rec["waf"].get<double>());
	CHECK(r["waf"].get<double>() <= j["target"].get<double>());
	if (rec["hit_ratio"].is_number())
		CHECK(r["hit_ratio"].get<double>() == rec["hit_ratio"].get<double>());
}

// advise_json, then `kvfdp simulate source` written here (not advise's check: line) at the
// recommended util, placement and eviction: the same run. Returns advise's JSON.
json check_agrees(const kvfdp::test::TempDir &dir, const std::string &source,
		  const std::string &extra)
{
	const json j = advise_json(dir, source, extra);
	const json &rec = j["recommendation"];
	char u[40];
	std::snprintf(u, sizeof u, "%.17g", rec["util"].get<double>());
	std::string sim = "simulate " + source + " --util " + u + " --placement " +
			  rec["placement"].get<std::string>();
	if (rec["evict"].is_string())
		sim += " --kv-evict " + rec["evict"].get<std::string>();
	check_same_run(dir, j, sim);
	// The "check:" command is that simulate run, advise's own options left out.
	const std::string check = rec["check"].get<std::string>();
	CHECK(check.rfind("kvfdp simulate ", 0) == 0);
	CHECK(check.find("--placement " + rec["placement"].get<std::string>()) !=
	      std::string::npos);
	CHECK(check.find("--sweep") == std::string::npos);
	return j;
}

// As check_agrees for a block trace of 64 MiB: the recommendation's "check:" command
// (simulate at --capacity = 64 MiB / util) makes the same run.
json check_agrees_at_capacity(const kvfdp::test::TempDir &dir, const std::string &source,
			      const std::string &extra)
{
	const json j = advise_json(dir, source, extra);
	const std::string check = j["recommendation"]["check"].get<std::string>();
	CAPTURE(check);
	CHECK(check.find("--capacity 64MiB") == std::string::npos);
	// 16384 mapping units of 4 KiB over util, rounded up to a unit.
	const auto units = static_cast<uint64_t>(
		std::ceil(16384.0 / j["recommendation"]["util"].get<double>() - 1e-9));
	CHECK(check.find("--capacity " + std::to_string(units * 4096) + " ") != std::string::npos);
	check_same_run(dir, j, check.substr(std::string("kvfdp ").size()));
	return j;
}

const std::string kHotcold = "advise --workload hotcold --capacity 256MiB ";

}  // namespace

TEST_CASE(
	"advise: the shared host at 7% OP: the recommendation meets 1.05 and agrees with simulate")
{
	TraceDir t;
	check_agrees(
		t.dir,
		"--workload host --kv-trace mooncake-conversation.jsonl --kv-scale 1/256 --capacity 4GiB "
		"--op 0.07 --ru-size 16MiB",
		"--sweep util=0.90:1.00:0.10");
}

TEST_CASE("advise: a chunk store tries each eviction order and agrees with simulate at its choice")
{
	TraceDir t;
	const std::string store =
		"--kv-trace mooncake-conversation.jsonl --kv-scale 1/256 --kv-requests 6000 "
		"--capacity 512MiB --op 0.07 --ru-size 4MiB";
	const json j =
		check_agrees(t.dir, store, "--sweep util=0.90:1.00:0.10 --placement none,writer");
	CHECK(j["evictions"] == json::array({"lru", "fifo", "fifo2"}));
	CHECK(j["runs"].size() == 3 * 2 * 2);
	CHECK(j["recommendation"]["evict"].is_string());
	CHECK(j["recommendation"]["hit_ratio_cost"].get<double>() >= 0);
	// --kv-evict narrows the choice to the one order.
	const Run one = run_kvfdp(
		t.dir, "advise " + store +
			       " --sweep util=1:1:0.1 --placement none --kv-evict fifo -o json");
	REQUIRE(one.rc == 0);
	const json oj = json::parse(one.out);
	CHECK(oj["evictions"] == json::array({"fifo"}));
	// Its check command names the order once: simulate takes it.
	const std::string check = oj["recommendation"]["check"].get<std::string>();
	CHECK(check.find("--kv-evict fifo") == check.rfind("--kv-evict"));
	const Run again = run_kvfdp(t.dir, check.substr(std::string("kvfdp ").size()) + " -o json");
	CAPTURE(again.err);
	CHECK(again.rc == 0);
}

TEST_CASE(
	"advise: a block trace: utilisation is the traced capacity on a larger drive, as simulate --capacity")
{
	kvfdp::test::TempDir dir;
	// 64 MiB addressed: writer 2 fills LBAs 2048.. once, then writer 1 rewrites 16-LBA pieces
	// of the first 8 MiB at random, writer 2 one piece of its own in eight turns.
	std::string csv = "t_us,op,slba,nlb,class,writer\n";
	uint64_t t = 0, x = 1;
	auto next = [&x](uint64_t n) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		return (x >> 33) % n;
	};
	for (uint64_t lba = 2048; lba < 16384; lba += 16)
		csv += std::to_string(++t) + ",W," + std::to_string(lba) + ",16,0,2\n";
	for (int i = 0; i < 12000; i++) {
		const bool cold = i % 8 == 0;
		const uint64_t lba =
			cold ? 2048 + 16 * next((16384 - 2048) / 16) : 16 * next(2048 / 16);
		csv += std::to_string(++t) + ",W," + std::to_string(lba) + ",16,0," +
		       (cold ? "2" : "1") + "\n";
	}
	kvfdp::test::write_file(dir.path + "/blk.csv", csv);
	const std::string trace = "--blk-trace blk.csv --capacity 64MiB --ru-size 1MiB --op 0.07";
	const json j =
		check_agrees_at_capacity(dir, trace, "--sweep util=0.50:1.00:0.10 --target 1.5");
	// The sweep changes what the model sees: not every utilisation gives the same WAF.
	double lo = 1e9, hi = 0;
	for (const json &r : j["runs"]) {
		lo = std::min(lo, r["waf"].get<double>());
		hi = std::max(hi, r["waf"].get<double>());
	}
	CHECK(hi > lo);
}

TEST_CASE("advise: bad targets, sweep specs and --util are one line naming them, exit 2")
{
	kvfdp::test::TempDir dir;
	struct Bad {
		const char *args, *says;
	} const bad[] = {
		{"--target 0.95", "--target: 0.95 cannot be met"},
		{"--target fast", "--target: 'fast' is not a number"},
		{"--sweep util=1.0:0.5:0.1", "--sweep: 'util=1.0:0.5:0.1'"},
		{"--sweep util=0.5:1.0:0", "--sweep: 'util=0.5:1.0:0'"},
		{"--sweep op=0.05:0.28:0.01",
		 "--sweep: 'op=0.05:0.28:0.01' sweeps op; advise sweeps util"},
		{"--util 0.9", "--util: advise sweeps the utilisation"},
		{"-o yaml", "-o/--output: 'yaml'"},
	};
	for (const Bad &b : bad) {
		CAPTURE(b.args);
		const Run r = run_kvfdp(dir, kHotcold + b.args);
		CHECK(r.rc == 2);
		CHECK(r.out.empty());
		CHECK(line_count(r.err) == 1);
		CHECK(r.err.find(std::string("kvfdp advise: ") + b.says) == 0);
	}
}

TEST_CASE("advise: a target no setting meets is one line with the best found, after the table")
{
	kvfdp::test::TempDir dir;
	const Run r = run_kvfdp(
		dir, "advise --workload uniform --capacity 256MiB --sweep util=0.90:1.00:0.10 "
		     "--placement none --target 1.0");
	CHECK(r.rc == 1);
	CHECK(line_count(r.err) == 1);
	CHECK(r.err.find(
		      "kvfdp advise: no setting meets WAF <= 1 on uniform; the best found is WAF ") ==
	      0);
	CHECK(r.out.find("UTIL") != std::string::npos);
	CHECK(r.out.find("recommend:") == std::string::npos);
	const Run j = run_kvfdp(
		dir, "advise --workload uniform --capacity 256MiB --sweep util=0.90:1.00:0.10 "
		     "--placement none --target 1.0 -o json");
	CHECK(j.rc == 1);
	const json out = json::parse(j.out);
	CHECK(out["recommendation"].is_null());
	CHECK(out["best"]["waf"].get<double>() > 1.0);
}
