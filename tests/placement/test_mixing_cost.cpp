// placement: the projection of what mixing keys on one handle costs (mixing_cost.hpp): the
// death-age buckets, one key's projection against greedy theory, mixing a key that dies in
// write order with one that does not, the groupings (lifetime ratio, order split, projection).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "placement/mixing_cost.hpp"

using namespace kvfdp::placement;

namespace {

constexpr uint64_t kCap = 4ull << 30;
const unsigned kShift = age_shift_for(kCap);

// All of a key's data dies at age life (in write order: a FIFO).
LifeMass in_order(double life)
{
	std::array<double, kAgeBuckets> d{};
	d[age_bucket(static_cast<uint64_t>(life), kShift)] = 1;
	LifeMass m;
	REQUIRE(life_mass(d, life, life, kShift, m));
	return m;
}

// Exponential lifetimes of mean life (uniformly random overwrites), as the buckets see them.
LifeMass memoryless(double life)
{
	std::array<double, kAgeBuckets> d{};
	for (unsigned b = 0; b < kAgeBuckets; b++)
		d[b] = std::exp(-age_edge(b, kShift) / life) -
		       std::exp(-age_edge(b + 1, kShift) / life);
	LifeMass m;
	REQUIRE(life_mass(d, life, life, kShift, m));
	return m;
}

double waf_of(std::vector<CostCurve> groups, double space)
{
	return project_waf(groups, space, kShift);
}

// 8 handles, 16 MiB RUs and room for 1.2 lifetimes of data.
CostGrouping eight_handles(double life)
{
	CostGrouping g;
	g.max_groups = 8;
	g.room = 1.2 * life;
	g.ru_bytes = 16 << 20;
	g.age_shift = kShift;
	return g;
}

}  // namespace

TEST_CASE("mixing cost: death ages fall in half-octave buckets relative to the capacity")
{
	CHECK(age_bucket(0, kShift) == 0);
	CHECK(age_bucket(1, kShift) == 0);
	const uint64_t base = uint64_t{1} << kShift;
	CHECK(age_bucket(base, kShift) == 0);  // below 1.5 x base
	CHECK(age_bucket(base + base / 2, kShift) == 1);
	CHECK(age_bucket(2 * base, kShift) == 2);
	CHECK(age_bucket(3 * base, kShift) == 3);
	CHECK(age_bucket(~uint64_t{0}, kShift) == kAgeBuckets - 1);
	for (unsigned b = 1; b < kAgeBuckets; b++) {
		CHECK(age_bucket(static_cast<uint64_t>(age_edge(b, kShift)), kShift) == b);
		CHECK(age_bucket(static_cast<uint64_t>(age_edge(b, kShift)) - 1, kShift) == b - 1);
	}
	// A key's buckets, the mean and the lifetime make a distribution of that mean.
	std::array<double, kAgeBuckets> d{};
	d[20] = 3;
	d[22] = 1;
	LifeMass m;
	REQUIRE(life_mass(d, 1e9, 2e9, kShift, m));
	double mass = 0, mean = 0;
	for (unsigned i = 0; i <= kAgeBuckets; i++) {
		mass += m.mass[i];
		mean += m.mass[i] * (m.mass[i] > 0 ? m.age[i] : 0);
	}
	CHECK(mass == doctest::Approx(1.0));
	CHECK(mean == doctest::Approx(2e9).epsilon(0.001));
	CHECK(!life_mass(std::array<double, kAgeBuckets>{}, 0, 0, kShift, m));
}

TEST_CASE("mixing cost: one key against greedy theory")
{
	const double life = kCap / 2.0;
	// In write order, units empty whole: no copies as long as the space holds its data.
	CHECK(waf_of({cost_curve(in_order(life), 1.0, kShift)}, 1.07 * life) ==
	      doctest::Approx(1.0));
	CHECK(waf_of({cost_curve(in_order(life), 1.0, kShift)}, 0.9 * life) > 1.5);
	// Uniformly random overwrites: greedy (FIFO-equivalent) theory s = exp(-(1 - s) alpha),
	// WAF = 1 / (1 - s); the buckets' resolution keeps the projection within 25%.
	for (double alpha : {1.5, 2.0, 3.0}) {
		double s = 0.5;
		for (int i = 0; i < 200; i++)
			s = std::exp(-(1 - s) * alpha);
		const double theory = 1 / (1 - s);
		const double got =
			waf_of({cost_curve(memoryless(life), 1.0, kShift)}, alpha * life);
		CHECK(got > 1.0);
		CHECK(std::fabs(got - theory) < 0.25 * (theory - 1) + 0.02);
	}
	// More space never costs more.
	double last = 1e9;
	for (double alpha = 1.1; alpha < 4; alpha += 0.1) {
		const double w = waf_of({cost_curve(memoryless(life), 1.0, kShift)}, alpha * life);
		CHECK(w <= last + 1e-9);
		last = w;
	}
}

TEST_CASE(
	"mixing cost: a key dying in write order mixed with one of equal mean that does not costs more than apart")
{
	const double life = kCap / 4.0;
	const CostCurve fifo = cost_curve(in_order(life), 0.5, kShift);
	const CostCurve lru = cost_curve(memoryless(life), 0.5, kShift);
	const double space = 1.2 * life;
	const double mixed = waf_of({mix(fifo, lru)}, space);
	const double apart = waf_of({fifo, lru}, space);
	CHECK(apart < mixed - 0.1);
	// Two keys that die the same way cost the same mixed or apart.
	const CostCurve a = cost_curve(memoryless(life), 0.5, kShift);
	CHECK(waf_of({mix(a, a)}, space) == doctest::Approx(waf_of({a, a}, space)).epsilon(0.01));
}

TEST_CASE(
	"mixing cost: the lifetime grouping keeps equal means together; the projection splits in-order from out-of-order")
{
	const double life = kCap / 4.0;
	std::vector<CostKey> keys = {
		{cost_curve(in_order(life), 0.5, kShift), life, 0, 1, 2},
		{cost_curve(memoryless(life), 0.5, kShift), life, 0, 2, 4},
	};
	CostGrouping g;
	g.max_groups = 8;
	g.room = 1.2 * life;
	g.ru_bytes = 16 << 20;
	g.age_shift = kShift;
	CHECK(group_by_lifetime(keys, g).size() == 1);
	double waf = 0;
	const auto split = group_by_cost(keys, g, &waf);
	CHECK(split.size() == 2);
	CHECK(waf < waf_of({mix(keys[0].curve, keys[1].curve)}, g.room - g.ru_bytes));
	// One handle for everything: the projection has nothing to choose.
	g.max_groups = 1;
	CHECK(group_by_cost(keys, g).size() == 1);
	// Lifetimes 8x apart: both groupings split.
	keys[1] = {cost_curve(in_order(8 * life), 0.5, kShift), 8 * life, 0, 2, 4};
	g.max_groups = 8;
	g.room = 6 * life;
	CHECK(group_by_lifetime(keys, g).size() == 2);
	CHECK(group_by_cost(keys, g).size() == 2);
	// A key below min_group_share joins a group.
	keys[1].curve.share = 0.001;
	CHECK(group_by_lifetime(keys, g).size() == 1);
	CHECK(group_by_cost(keys, g).size() == 1);
}

TEST_CASE("mixing cost: death_order is 1 for deaths at one age and lower the wider they spread")
{
	std::array<double, kAgeBuckets> d{};
	CHECK(death_order(d) == 1.0);  // no deaths: nothing says they spread
	d[10] = 3;
	CHECK(death_order(d) == 1.0);
	d[11] = 1;
	CHECK(death_order(d) ==
	      1.0);  // two adjacent buckets: still one age, at half-octave resolution
	d[20] = 4;
	CHECK(death_order(d) == doctest::Approx(0.5));
}

TEST_CASE(
	"mixing cost: the order split separates in-order from out-of-order keys of equal mean lifetime")
{
	const double life = kCap / 4.0;
	const double spread_order = death_order([&] {
		std::array<double, kAgeBuckets> d{};
		for (unsigned b = 0; b < kAgeBuckets; b++)
			d[b] = std::exp(-age_edge(b, kShift) / life) -
			       std::exp(-age_edge(b + 1, kShift) / life);
		return d;
	}());
	REQUIRE(1.0 - spread_order >= CostGrouping{}.order_gap);
	// Writer 1 a FIFO, writer 2 random overwrites, writer 3 another FIFO: equal means.
	std::vector<CostKey> keys = {
		{cost_curve(in_order(life), 0.4, kShift), life, 0, 1, 2, 1.0},
		{cost_curve(memoryless(life), 0.4, kShift), life, 0, 2, 4, spread_order},
		{cost_curve(in_order(life), 0.2, kShift), life, 0, 3, 2, 1.0},
	};
	CostGrouping g = eight_handles(life);
	const auto base = group_by_lifetime(keys, g);
	REQUIRE(base.size() == 1);
	double waf = 0;
	const auto split = split_by_order(keys, base, g, &waf);
	REQUIRE(split.size() == 2);
	// The two FIFOs stay together (splitting them saves nothing), the random key is apart.
	for (const auto &grp : split)
		if (std::find(grp.begin(), grp.end(), 1u) != grp.end())
			CHECK(grp.size() == 1);
	CHECK(waf <
	      waf_of({mix(mix(keys[0].curve, keys[1].curve), keys[2].curve)}, g.room - g.ru_bytes) -
		      0.05);
	// A new cut needs every key on both sides evidenced: a key with few deaths shows the
	// order of its youngest data only. A cut already made (on two handles) stays.
	keys[1].evidenced = false;
	CHECK(split_by_order(keys, base, g).size() == 1);
	keys[1].handle = 1;
	CHECK(split_by_order(keys, base, g).size() == 2);
	keys[1].handle = 0;
	keys[1].evidenced = true;
	// Keys that all die the same way are never split.
	std::vector<CostKey> same = {keys[0], keys[2]};
	CHECK(split_by_order(same, group_by_lifetime(same, g), g).size() == 1);
	// One handle: nothing to split onto.
	g.max_groups = 1;
	CHECK(split_by_order(keys, base, g).size() == 1);
	// A side below min_group_share does not get a handle of its own.
	g.max_groups = 8;
	keys[1].curve = cost_curve(memoryless(life), 0.001, kShift);
	CHECK(split_by_order(keys, group_by_lifetime(keys, g), g).size() == 1);
}

TEST_CASE(
	"mixing cost: the order split keeps a split once made while the orders differ (hysteresis)")
{
	const double life = kCap / 4.0;
	std::vector<CostKey> keys = {
		{cost_curve(in_order(life), 0.5, kShift), life, 0, 1, 2, 1.0},
		{cost_curve(memoryless(life), 0.5, kShift), life, 0, 2, 4, 0.3},
	};
	CostGrouping g = eight_handles(life);
	const double mixed = waf_of({mix(keys[0].curve, keys[1].curve)}, g.room - g.ru_bytes);
	const double apart = waf_of({keys[0].curve, keys[1].curve}, g.room - 2 * g.ru_bytes);
	REQUIRE(mixed > apart);
	// A switch margin above the saving: on one handle now, they stay together ...
	g.switch_margin = mixed - apart + 0.01;
	double waf = 0;
	CHECK(split_by_order(keys, {{0, 1}}, g, &waf).size() == 1);
	CHECK(waf == doctest::Approx(mixed));
	// ... already on two handles, they stay apart, and down to half the order gap.
	keys[1].handle = 1;
	CHECK(split_by_order(keys, {{0, 1}}, g, &waf).size() == 2);
	CHECK(waf == doctest::Approx(apart));
	keys[1].order = 1.0 - 0.6 * g.order_gap;
	CHECK(split_by_order(keys, {{0, 1}}, g).size() == 2);
	// Orders that converged: back together.
	keys[1].order = 1.0 - 0.4 * g.order_gap;
	CHECK(split_by_order(keys, {{0, 1}}, g).size() == 1);
	// A gap too small for a new split, however much the projection says it saves.
	keys[1].handle = 0;
	keys[1].order = 1.0 - 0.8 * g.order_gap;
	g.switch_margin = 0.0;
	CHECK(split_by_order(keys, {{0, 1}}, g).size() == 1);
}
