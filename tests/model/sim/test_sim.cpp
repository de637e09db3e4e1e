// Unit tests of the simulate core: option parsing, the class map, the JSON and table shapes.
#include <doctest/doctest.h>

#include "model/sim/parse.hpp"
#include "model/sim/simulate.hpp"
#include "model/sim/synthetic.hpp"

using namespace kvfdp;
using namespace kvfdp::sim;

TEST_CASE("sim: sizes take KiB, MiB, GiB and TiB")
{
	CHECK(parse_size("4096") == 4096u);
	CHECK(parse_size("512B") == 512u);
	CHECK(parse_size("64KiB") == 65536u);
	CHECK(parse_size("1MiB") == 1048576u);
	CHECK(parse_size("1.5GiB") == 1610612736u);
	CHECK(parse_size("2TiB") == uint64_t{2} << 40);
	CHECK(parse_size("4g") == uint64_t{4} << 30);
	CHECK_FALSE(parse_size("").has_value());
	CHECK_FALSE(parse_size("0").has_value());
	CHECK_FALSE(parse_size("-1GiB").has_value());
	CHECK_FALSE(parse_size("1XB").has_value());
	CHECK_FALSE(parse_size("GiB").has_value());
	CHECK_FALSE(parse_size("1.3B").has_value());
	CHECK(parse_number("0.28") == doctest::Approx(0.28));
	CHECK_FALSE(parse_number("0.28x").has_value());
	CHECK_FALSE(parse_uint("8 ").has_value());
}

TEST_CASE("sim: classes map to handles by the placement library's default map (docs/placement.md)")
{
	// NOT_SET, NONE, SHORT, MEDIUM, LONG, EXTREME
	const uint32_t eight[] = {0, 0, 1, 2, 3, 4};
	const uint32_t three[] = {0, 0, 1, 1, 2, 2};  // placement::default_map
	for (uint8_t c = 0; c < 6; c++) {
		CHECK(default_handle_for_class(c, 8) == eight[c]);
		CHECK(default_handle_for_class(c, 3) == three[c]);
		CHECK(default_handle_for_class(c, 1) == 0);
	}
	CHECK(default_handle_for_class(200, 8) == 0);
	CHECK(parse_placement("hint") == Placement::hint);
	CHECK_FALSE(parse_placement("all").has_value());
}

TEST_CASE("sim: JSON keys come in the documented order; the table has every column")
{
	model::ModelConfig c;
	c.logical_bytes = 64u << 20;
	c.ru_size = 256u << 10;
	UniformOptions o;
	o.warmup_writes = 1;
	o.measure_writes = 1;
	UniformWorkload w(o);
	auto r = run_one(c, w, Placement::none, nullptr);
	REQUIRE(r.ok());
	CHECK(r->host_bytes == 64u << 20);  // one measured device write
	CHECK(r->waf > 1.0);
	const auto j = runs_to_json({*r});
	REQUIRE(j["runs"].size() == 1);
	std::vector<std::string> keys;
	for (auto it = j["runs"][0].begin(); it != j["runs"][0].end(); ++it)
		keys.push_back(it.key());
	REQUIRE(keys.size() >= 6);
	CHECK(keys[0] == "placement");
	CHECK(keys[1] == "host_bytes");
	CHECK(keys[2] == "media_bytes");
	CHECK(keys[3] == "waf");
	CHECK(keys[4] == "gc_runs");
	CHECK(keys[5] == "relocated_bytes");
	CHECK(j["runs"][0]["placement"] == "none");
	CHECK(j["runs"][0]["media_bytes"].get<uint64_t>() == r->media_bytes);
	const std::string t = runs_to_table({*r});
	for (const char *col :
	     {"PLACEMENT", "HOST BYTES", "MEDIA BYTES", "WAF", "GC RUNS", "RELOCATED BYTES"})
		CHECK(t.find(col) != std::string::npos);
	CHECK(t.find("none") != std::string::npos);
}

TEST_CASE("sim: a model that runs out of space is an error, not a crash")
{
	model::ModelConfig c;
	c.logical_bytes = 64u << 20;
	c.ru_size = 256u << 10;
	c.nrg = 2;
	c.nruh = 2;
	c.op = 0.6;  // 102 MiB physical: 51 MiB per group, less than the 64 MiB written
	// Placement none puts everything in group 0, which holds only its share.
	UniformWorkload w(UniformOptions{});
	auto r = run_one(c, w, Placement::none, nullptr);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().message().find("reclaimable space") != std::string::npos);
}

TEST_CASE("sim: a run that wrote nothing in its measured part says WAF n/a, not 0.000")
{
	RunReport r;
	r.placement = "none";
	r.workload = "t";
	const std::string table = runs_to_table({r});
	CHECK(table.find("n/a") != std::string::npos);
	CHECK(table.find("0.000") == std::string::npos);
	CHECK(table.find("WAF n/a: the measured part wrote no bytes") != std::string::npos);
	CHECK(runs_to_json({r})["runs"][0]["waf"].is_null());
	r.host_bytes = 100;
	r.media_bytes = 150;
	r.waf = 1.5;
	CHECK(runs_to_table({r}).find("1.500") != std::string::npos);
	CHECK(runs_to_json({r})["runs"][0]["waf"] == 1.5);
}

TEST_CASE("sim: --placement all adds writer and learned after hint, oracle last")
{
	HotColdWorkload hc(HotColdOptions{});
	auto p = runnable_placements(hc);
	REQUIRE(p.size() == 4);
	CHECK(p[2] == Placement::writer);
	CHECK(p[3] == Placement::learned);
	UniformWorkload u(UniformOptions{});
	CHECK(runnable_placements(u) == std::vector<Placement>{Placement::none});
	CHECK(parse_placement("learned") == Placement::learned);
	CHECK(std::string(placement_name(Placement::writer)) == "writer");
}

namespace {

// Two writers: writer 1 rewrites a small ring fast, writer 2 a large ring slowly; halfway
// writer 2 deletes everything and stops.
class TwoWriters final : public Workload {
public:
	[[nodiscard]] std::string name() const override { return "two"; }
	[[nodiscard]] Result<void> run(Placement, uint64_t logical_lbas, uint32_t, BlockSink &sink,
				       Progress *) override
	{
		const uint64_t nlb = 16, small = logical_lbas / 16, large = logical_lbas / 2;
		uint64_t a = 0, b = 0;
		const uint64_t total = 40 * logical_lbas / nlb;
		for (uint64_t i = 0; i < total; i++) {
			const bool second_half = i >= total / 2;
			if (second_half && i == total / 2)
				sink.deallocate(small, large);
			if (second_half || i % 5 != 0) {
				sink.write(a % small, nlb, 0, 1);
				a += nlb;
			} else {
				sink.write(small + b % large, nlb, 0, 2);
				b += nlb;
			}
		}
		return ok();
	}
};

}  // namespace

TEST_CASE("sim: learned splits two writers, and closes the handle it abandons with RUH Update")
{
	model::ModelConfig c;
	c.logical_bytes = 64u << 20;
	c.ru_size = 256u << 10;
	c.op = 0.07;
	TwoWriters w;
	auto none = run_one(c, w, Placement::none, nullptr);
	auto learned = run_one(c, w, Placement::learned, nullptr);
	REQUIRE(none.ok());
	REQUIRE(learned.ok());
	const auto &l = learned->extra["learned"];
	CHECK(l["recomputes"].get<uint64_t>() > 10);
	CHECK(l["ruh_updates"].get<uint64_t>() >= 1);
	CHECK(l["ruh_update_errors"] == 0);
	CHECK(l["groups"] == 1);  // writer 2 is gone at the end
	CHECK(learned->waf < none->waf);
	MESSAGE("two writers: none " << none->waf << ", learned " << learned->waf
				     << ", RUH updates " << l["ruh_updates"]);
}
