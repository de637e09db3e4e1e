// Unit tests of `kvfdp advise`'s choice (model/sim/advise.hpp) over a fake source: the highest
// utilisation that meets the target, the hit ratio between eviction orders, no setting, the
// bad targets and sweep specs, and the table and JSON.
#include <doctest/doctest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "model/sim/advise.hpp"

using namespace kvfdp;
using namespace kvfdp::sim;

namespace {

// A source whose WAF and hit ratio are functions of the setting; counts its runs.
class FakeSource final : public AdviseSource {
public:
	std::function<double(const AdviseSetting &)> waf;
	std::function<double(const AdviseSetting &)> hit;     // unset: no store
	std::function<uint64_t(const AdviseSetting &)> host;  // unset: 1 MiB
	std::vector<std::string> evicts;
	std::vector<std::string> mks;  // evictor marks ("HIGH,LOW"); empty: none
	int runs = 0;

	std::string name() const override { return "fake"; }
	std::vector<Placement> placements() const override
	{
		return {Placement::none, Placement::hint, Placement::writer, Placement::learned,
			Placement::oracle};
	}
	std::vector<std::string> evictions() const override { return evicts; }
	std::vector<std::string> marks() const override { return mks; }
	Result<RunReport> run(const AdviseSetting &s) override
	{
		runs++;
		RunReport r;
		r.placement = placement_name(s.placement);
		r.host_bytes = host ? host(s) : 1 << 20;
		r.waf = waf(s);
		r.media_bytes = static_cast<uint64_t>(static_cast<double>(r.host_bytes) * r.waf);
		if (hit)
			r.extra["hit_ratio"] = hit(s);
		return r;
	}
	std::string simulate_command(const AdviseSetting &s) const override
	{
		char u[32];
		std::snprintf(u, sizeof u, "%g", s.util);
		return std::string("simulate ") + u + " " + placement_name(s.placement) + " " +
		       s.evict;
	}
};

AdviseOptions options(double target, const char *sweep = "util=0.50:1.00:0.10")
{
	AdviseOptions o;
	o.target = target;
	auto s = parse_advise_sweep(sweep);
	REQUIRE(s);
	o.sweep = *s;
	return o;
}

// WAF rising with utilisation, lower for writer than for none.
double curve(const AdviseSetting &s)
{
	const double base = s.placement == Placement::writer ? 1.0 : 1.02;
	return base + (s.util > 0.75 ? (s.util - 0.75) : 0.0);
}

}  // namespace

TEST_CASE("advise: the highest utilisation meeting the target, oracle never run")
{
	FakeSource src;
	src.waf = curve;
	auto a = advise(src, options(1.06));
	REQUIRE(a);
	CHECK(src.runs == 6 * 4);  // six utilisations, none/hint/writer/learned
	REQUIRE(a->pick);
	const AdviseCell &p = a->cells[*a->pick];
	// writer: 1.0 + 0.05 at 0.80 meets 1.06; none, hint and learned are 0.02 above writer.
	CHECK(p.setting.util == doctest::Approx(0.8));
	CHECK(p.setting.placement == Placement::writer);
	CHECK(p.run.waf <= 1.06);
	for (const AdviseCell &c : a->cells)
		CHECK(c.setting.placement != Placement::oracle);
	// The check line is the source's command at the recommendation.
	CHECK(a->check == "simulate 0.8 writer ");
	const std::string t = advice_to_table(*a);
	CHECK(t.find("recommend: utilisation 0.80 (leave 20% of the logical capacity free), placement writer") !=
	      std::string::npos);
	CHECK(t.find("1.050*") != std::string::npos);
}

TEST_CASE("advise: equal WAF keeps the simpler placement; the JSON names the choice")
{
	FakeSource src;
	src.waf = [](const AdviseSetting &) { return 1.0; };
	auto o = options(1.05);
	auto a = advise(src, o);
	REQUIRE(a);
	REQUIRE(a->pick);
	CHECK(a->cells[*a->pick].setting.placement == Placement::none);
	CHECK(a->cells[*a->pick].setting.util == doctest::Approx(1.0));
	const auto j = advice_to_json(*a);
	CHECK(j["recommendation"]["placement"] == "none");
	CHECK(j["recommendation"]["free"].get<double>() == doctest::Approx(0.0));
	CHECK(j["recommendation"]["check"] == "simulate 1 none ");
	CHECK(j["runs"].size() == 24);
	CHECK(j["evictions"].empty());
}

TEST_CASE("advise: a store takes the best hit ratio at the top utilisation, and says its cost")
{
	FakeSource src;
	src.evicts = {"lru", "fifo", "fifo2"};
	// lru: best hits but WAF over the target at 1.0; fifo and fifo2 meet it; fifo2 hits more.
	src.waf = [](const AdviseSetting &s) { return s.evict == "lru" ? 1.2 : 1.0; };
	src.hit = [](const AdviseSetting &s) {
		return (s.evict == "lru" ? 0.30 : s.evict == "fifo" ? 0.25 : 0.28) * s.util;
	};
	// fifo2's rewrites: a quarter more host (and media) bytes.
	src.host = [](const AdviseSetting &s) -> uint64_t {
		return s.evict == "fifo2" ? 5 << 20 : 4 << 20;
	};
	auto a = advise(src, options(1.05, "util=0.90:1.00:0.10"));
	REQUIRE(a);
	CHECK(src.runs == 3 * 2 * 4);
	REQUIRE(a->pick);
	const AdviseCell &p = a->cells[*a->pick];
	CHECK(p.setting.evict == "fifo2");
	CHECK(p.setting.util == doctest::Approx(1.0));
	const auto j = advice_to_json(*a);
	CHECK(j["recommendation"]["hit_ratio_cost"].get<double>() == doctest::Approx(0.02));
	CHECK(j["recommendation"]["best_hit_ratio"]["evict"] == "lru");
	const std::string t = advice_to_table(*a);
	CHECK(t.find("EVICT") != std::string::npos);
	CHECK(t.find("0.020 below lru's 0.300") != std::string::npos);
	CHECK(t.find("media written 5.00 MiB, 25% more than fifo's 4.00 MiB (0.250 hit ratio)") !=
	      std::string::npos);
	CHECK(j["recommendation"]["least_media"]["evict"] == "fifo");
	CHECK(a->check == "simulate 1 none fifo2");
}

TEST_CASE("advise: no setting meets the target: one line with the best found")
{
	FakeSource src;
	src.waf = [](const AdviseSetting &s) { return curve(s) + 0.01; };
	auto a = advise(src, options(1.001));
	REQUIRE(a);
	CHECK_FALSE(a->pick);
	const AdviseCell &b = a->cells[a->best];
	CHECK(b.setting.placement == Placement::writer);
	CHECK(b.setting.util == doctest::Approx(0.7));  // WAF 1.01 from 0.5 to 0.7: the highest
	const std::string line = no_setting_line(*a);
	CHECK(line.find('\n') == std::string::npos);
	CHECK(line.find(
		      "no setting meets WAF <= 1.001 on fake; the best found is WAF 1.010 at utilisation 0.70") ==
	      0);
	CHECK(advice_to_json(*a)["recommendation"].is_null());
	CHECK(advice_to_json(*a)["best"]["placement"] == "writer");
}

namespace {

// An evictor whose WAF falls and hit ratio falls as its marks go down (hash order), while
// fifo meets any target at a lower hit ratio.
FakeSource marks_source()
{
	FakeSource src;
	src.mks = {"95,89", "85,70", "70,50", "60,40"};
	src.waf = [](const AdviseSetting &s) {
		if (s.evict == "fifo")
			return 1.0;
		return s.marks == "95,89"   ? 2.4
		       : s.marks == "85,70" ? 1.35
		       : s.marks == "70,50" ? 1.04
					    : 1.02;
	};
	src.hit = [](const AdviseSetting &s) {
		const double h = std::stod(s.marks.substr(0, 2)) / 100 * 0.3;
		return s.evict == "fifo" ? h - 0.05 : h;
	};
	return src;
}

}  // namespace

TEST_CASE("advise: an evictor's marks: the highest hit ratio that meets the target, and its cost")
{
	FakeSource src = marks_source();
	src.evicts = {"hash", "fifo"};
	auto a = advise(src, options(1.05, "util=1:1:1"));
	REQUIRE(a);
	CHECK(src.runs == 2 * 4 * 4);
	REQUIRE(a->pick);
	const AdviseCell &p = a->cells[*a->pick];
	// fifo 95/89% meets the target at 0.235; hash 70/50% meets it at 0.21: fifo 95/89 wins.
	CHECK(p.setting.evict == "fifo");
	CHECK(p.setting.marks == "95,89");
	const std::string t = advice_to_table(*a);
	CHECK(t.find("MARKS") != std::string::npos);
	CHECK(t.find("eviction fifo, evictor marks 95/89%: WAF 1.000") != std::string::npos);
	CHECK(t.find("0.050 below hash 95/89%'s 0.285") != std::string::npos);
	const auto j = advice_to_json(*a);
	CHECK(j["marks"] == nlohmann::ordered_json::array({"95,89", "85,70", "70,50", "60,40"}));
	CHECK(j["recommendation"]["marks"] == "95,89");
	CHECK(j["recommendation"]["best_hit_ratio"]["marks"] == "95,89");
	CHECK(a->check == "simulate 1 none fifo");

	// hash alone: the highest marks that meet the target.
	FakeSource hash = marks_source();
	hash.evicts = {"hash"};
	auto h = advise(hash, options(1.05, "util=1:1:1"));
	REQUIRE(h);
	REQUIRE(h->pick);
	CHECK(h->cells[*h->pick].setting.marks == "70,50");
	CHECK(no_marks_lines(*h).empty());
}

TEST_CASE("advise: no marks meet the target: one line per eviction order with the best found")
{
	FakeSource src = marks_source();
	src.evicts = {"hash"};
	auto a = advise(src, options(1.01, "util=1:1:1"));
	REQUIRE(a);
	CHECK_FALSE(a->pick);
	const std::string lines = no_marks_lines(*a);
	CHECK(lines ==
	      "eviction hash: no marks meet WAF <= 1.01; the best is 60/40% (WAF 1.020, placement none, hit ratio 0.180)\n");
	const std::string line = no_setting_line(*a);
	CHECK(line.find("evictor marks 60/40%: raise --op, try lower marks, or raise --target") !=
	      std::string::npos);
	// One eviction order: the table ends with the one no-setting line alone.
	const std::string t = advice_to_table(*a);
	CHECK(t.find(lines) == std::string::npos);
	CHECK(t.substr(t.size() - line.size() - 1) == line + "\n");
	// Two: a line for the order no marks of which meet the target, then the no-setting line.
	FakeSource two = marks_source();
	two.evicts = {"hash", "lru"};
	auto both = advise(two, options(1.01, "util=1:1:1"));
	REQUIRE(both);
	CHECK_FALSE(both->pick);
	const std::string per_order = no_marks_lines(*both);
	CHECK(per_order.find(lines) == 0);
	CHECK(per_order.find("eviction lru: no marks meet WAF <= 1.01; the best is 60/40%") !=
	      std::string::npos);
	CHECK(advice_to_table(*both).find(per_order + no_setting_line(*both)) != std::string::npos);
	// With --evict-marks naming one value, that value alone is run.
	FakeSource one = marks_source();
	one.evicts = {"hash"};
	AdviseOptions o = options(1.05, "util=1:1:1");
	o.marks = {"85,70"};
	auto b = advise(one, o);
	REQUIRE(b);
	CHECK(one.runs == 4);
	CHECK_FALSE(b->pick);
	CHECK(no_setting_line(*b).find("WAF 1.350 at utilisation 1.00") != std::string::npos);
}

TEST_CASE("advise: targets below 1.0 and bad sweep specs are one line naming them")
{
	auto low = parse_advise_target("0.98");
	REQUIRE_FALSE(low);
	CHECK(low.error().message().find("--target: 0.98 cannot be met") == 0);
	CHECK(low.error().message().find("1.0") != std::string::npos);
	CHECK_FALSE(parse_advise_target("fast"));
	auto one = parse_advise_target("1");
	REQUIRE(one);
	CHECK(*one == 1.0);

	for (const char *bad :
	     {"util=1.0:0.5:0.1", "util=0.5:1.0:0", "util=0:1:0.1", "util=a:1:0.1", "util=0.5"}) {
		auto s = parse_advise_sweep(bad);
		REQUIRE_FALSE(s);
		CHECK(s.error().message().find(std::string("'") + bad + "'") != std::string::npos);
		CHECK(s.error().message().find('\n') == std::string::npos);
	}
	auto op = parse_advise_sweep("op=0.05:0.28:0.01");
	REQUIRE_FALSE(op);
	CHECK(op.error().message().find("advise sweeps util") != std::string::npos);
}
