// Unit tests of `kvfdp simulate --sweep`: the spec parser (good and bad specs), the table, the
// JSON and the chart a sweep draws.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "model/sim/sweep.hpp"

using namespace kvfdp;
using namespace kvfdp::sim;

namespace {

RunReport run(const char *placement, double waf, uint64_t host = 1 << 20)
{
	RunReport r;
	r.placement = placement;
	r.host_bytes = host;
	r.media_bytes = static_cast<uint64_t>(static_cast<double>(host) * waf);
	r.waf = waf;
	return r;
}

}  // namespace

TEST_CASE("sweep: util=0.80:1.00:0.05 is five points, 1.00 included")
{
	auto s = parse_sweep("util=0.80:1.00:0.05");
	REQUIRE(s);
	CHECK(s->key == "util");
	REQUIRE(s->values.size() == 5);
	const double want[] = {0.80, 0.85, 0.90, 0.95, 1.00};
	for (size_t i = 0; i < 5; i++)
		CHECK(s->values[i] == doctest::Approx(want[i]).epsilon(1e-12));
	// Never past util's bound, though 0.80 + 4 * 0.05 rounds above 1 in binary.
	CHECK(s->values.back() <= 1.0);
}

TEST_CASE("sweep: op ranges, one-point ranges and an end the step does not reach")
{
	auto op = parse_sweep("op=0.05:0.28:0.01");
	REQUIRE(op);
	CHECK(op->key == "op");
	REQUIRE(op->values.size() == 24);
	CHECK(op->values.front() == doctest::Approx(0.05));
	CHECK(op->values.back() == doctest::Approx(0.28));
	auto one = parse_sweep("util=1:1:0.1");
	REQUIRE(one);
	CHECK(one->values.size() == 1);
	auto short_step = parse_sweep("util=0.8:1:0.3");
	REQUIRE(short_step);
	REQUIRE(short_step->values.size() == 1);
	CHECK(short_step->values[0] == doctest::Approx(0.8));
	auto max = parse_sweep("op=0.1:10:0.1");
	REQUIRE(max);
	CHECK(max->values.size() == kMaxSweepPoints - 1);
	CHECK(max->values.back() == doctest::Approx(10));
}

TEST_CASE("sweep: a bad spec is refused in one line naming it")
{
	struct Bad {
		const char *spec, *why;
	};
	const Bad bad[] = {
		{"foo=0.8:1:0.05", "not util or op"},
		{"util", "no KEY="},
		{"util=0.8:1", "not START:END:STEP"},
		{"util=0.8:1:0.05:1", "not START:END:STEP"},
		{"util=a:1:0.05", "'a', not a number"},
		{"util=0.8:1:", "'', not a number"},
		{"util=0.8:1x:0.05", "'1x'"},
		{"util=1:0.8:0.05", "starts above its end"},
		{"util=0.8:1:0", "step <= 0"},
		{"util=0.8:1:-0.05", "step <= 0"},
		{"util=0:1:0.1", "outside util's (0, 1]"},
		{"util=0.8:1.05:0.05", "outside util's (0, 1]"},
		{"op=0.05:11:1", "outside op's (0, 10]"},
		{"op=-0.1:0.2:0.1", "outside op's (0, 10]"},
		{"util=0.5:1:0.001", "more than 101 points"},
		{"UTIL=0.8:1:0.05", "not util or op"},
		{"util=nan:1:0.1", "not a number"},
	};
	for (const Bad &b : bad) {
		CAPTURE(b.spec);
		auto s = parse_sweep(b.spec);
		REQUIRE_FALSE(s);
		const std::string m = s.error().message();
		CHECK(m.find(std::string("'") + b.spec + "'") != std::string::npos);
		CHECK(m.find(b.why) != std::string::npos);
		CHECK(m.find('\n') == std::string::npos);
	}
}

TEST_CASE("sweep: the table has one row per point and one WAF column per placement")
{
	auto s = parse_sweep("util=0.9:1:0.1");
	REQUIRE(s);
	std::vector<SweepPoint> pts = {{0.9, {run("none", 1.25), run("learned", 1.0)}},
				       {1.0, {run("none", 1.5), run("learned", 1.125, 0)}}};
	const std::string t = sweep_to_table(*s, pts);
	CHECK(t.rfind("UTIL        none   learned\n", 0) == 0);
	CHECK(t.find("\n0.900      1.250     1.000\n") != std::string::npos);
	// No host bytes in the measured part: no WAF.
	CHECK(t.find("\n1.000      1.500       n/a\n") != std::string::npos);
	const auto j = sweep_to_json(*s, pts);
	CHECK(j["sweep"]["key"] == "util");
	CHECK(j["sweep"]["values"].size() == 2);
	REQUIRE(j["points"].size() == 2);
	CHECK(j["points"][1]["util"] == doctest::Approx(1.0));
	CHECK(j["points"][1]["runs"][0]["placement"] == "none");
	CHECK(j["points"][1]["runs"][1]["waf"].is_null());
}

TEST_CASE("sweep: the chart has one series per placement, a point per value, NaN for no WAF")
{
	auto s = parse_sweep("op=0.07:0.12:0.05");
	REQUIRE(s);
	std::vector<SweepPoint> pts = {{0.07, {run("none", 2.0), run("oracle", 1.1)}},
				       {0.12, {run("none", 1.5), run("oracle", 1.0, 0)}}};
	const plot::LineChart c = sweep_chart(*s, pts, "host", {"workload host, capacity 4GiB"});
	CHECK(c.title.find("over-provisioning") != std::string::npos);
	CHECK(c.title.find("host") != std::string::npos);
	REQUIRE(c.series.size() == 2);
	CHECK(c.series[0].name == "none");
	CHECK(c.series[1].name == "oracle");
	CHECK(c.series[0].x == std::vector<double>{0.07, 0.12});
	CHECK(c.series[0].y == std::vector<double>{2.0, 1.5});
	CHECK(std::isnan(c.series[1].y[1]));
	CHECK(c.y_include);
	CHECK(c.y_include_value == 1.0);
	REQUIRE(c.caption.size() == 1);
}
