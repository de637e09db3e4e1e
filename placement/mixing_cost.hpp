// What mixing keys on one handle costs: each key's lifetime distribution (a histogram of the
// device write-clock ages at which its data died), the greedy-GC projection of a grouping's
// WAF from those distributions, and the grouping that the projection prefers. Pure
// functions, no state: the learner (learner_group.cpp) measures, this file decides.
// docs/placement.md "Grouping by what mixing costs" derives the projection.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace kvfdp::placement {

// ---- ages ----
// Death ages are counted in kAgeBuckets buckets, two per octave, relative to the device's
// capacity: bucket 0 holds ages below 1.5 x 2^age_shift, bucket b >= 1 starts at
// 2^(age_shift + b/2) (b even) or 1.5 x 2^(age_shift + b/2) (b odd), and the last holds
// everything from 2^(age_shift + 15.5) x 1.5 on (the bucket edges are what a count of leading
// zeros and one more bit give, so the data path needs no floating point).
constexpr unsigned kAgeBuckets = 32;

// age_shift for a device of capacity bytes: bucket 0 ends near capacity / 4096 and the last
// bucket starts near 16 capacities.
[[nodiscard]] unsigned age_shift_for(uint64_t capacity_bytes) noexcept;

// The bucket of a death at age (device bytes written since the data was).
[[nodiscard]] inline unsigned age_bucket(uint64_t age, unsigned age_shift) noexcept
{
	if (age >> age_shift == 0)
		return 0;
	const unsigned msb = 63u - static_cast<unsigned>(__builtin_clzll(age));
	const unsigned half = msb ? static_cast<unsigned>((age >> (msb - 1)) & 1u) : 0u;
	const unsigned b = 2u * (msb - age_shift) + half;
	return b < kAgeBuckets ? b : kAgeBuckets - 1;
}

// The lower edge of bucket b in device bytes (edge(0) = 0, edge(kAgeBuckets) closes the last).
[[nodiscard]] double age_edge(unsigned b, unsigned age_shift) noexcept;

// ---- one key ----
// A key's lifetime distribution: point masses (shares of its bytes, summing to 1) at one age
// per bucket. The histogram says which bucket a death fell in, not where in it: each
// bucket's point sits at its geometric centre, all scaled so the distribution's mean is the
// measured mean age of deaths (a key whose data all dies at one age is a single point there,
// as in-order death is: a reclaim unit empties whole).
struct LifeMass {
	std::array<double, kAgeBuckets + 1> mass{};
	std::array<double, kAgeBuckets + 1> age{};  // increasing
};

// The distribution of a key from its (decayed) death histogram, the mean age of those deaths
// and its lifetime estimate: data that has not died yet (lifetime above the deaths' mean, as
// Little's law sees it) is a further point at twice the lifetime, so the mean is the
// estimate. No deaths at all: all of it dies at the lifetime. Returns false if neither is
// known.
bool life_mass(std::span<const double, kAgeBuckets> deaths, double death_mean, double lifetime,
	       unsigned age_shift, LifeMass &out);

// ---- the projection ----
// What one group (or key) costs at each age at which GC could take its reclaim units: a table
// on a fixed grid of ages, linear in the mixture, so a merged group's table is the
// share-weighted sum of its members'.
constexpr unsigned kCostGrid = 169;
struct CostCurve {
	double share = 0;                        // of the device's writes
	std::array<double, kCostGrid> copies{};  // share x GC copies per host byte, by grid age
};

// The curve of one key of write share `share` with distribution m.
[[nodiscard]] CostCurve cost_curve(const LifeMass &m, double share, unsigned age_shift);
// a + b: the curve of the two mixed on one handle.
[[nodiscard]] CostCurve mix(const CostCurve &a, const CostCurve &b);

// The projected WAF (media / host bytes) of groups on a device with `space` bytes of
// physical room for them (physical capacity less the data the learner does not see and the
// reclaim units held open): greedy GC takes, in every group, reclaim units whose valid share
// is the same, and that share is the one at which the groups' logs fill the space.
[[nodiscard]] double project_waf(std::span<const CostCurve> groups, double space,
				 unsigned age_shift);

// ---- grouping ----
struct CostKey {
	CostCurve curve;
	double life = 0;      // mean lifetime estimate, device bytes
	uint16_t handle = 0;  // where the key's writes go now
	uint64_t writer = 0;
	uint8_t cls = 0;
	// How much of the key's data dies at one age: the share of its death bytes in its two
	// heaviest adjacent age buckets (death_order()). 1 for data that dies in write order, lower
	// the wider its deaths spread. Only orders the candidate splits of split_by_order().
	double order = 1;
	// Its death order says something (the learner decides: a quarter of what it wrote has
	// died). A key with few deaths shows the order of its youngest data only (no deaths at
	// all: 1), so a new cut of split_by_order() needs every key on both sides evidenced; a
	// cut already made is kept by the orders as they are.
	bool evidenced = true;
};

// The share of a death histogram in its two heaviest adjacent buckets (1 with no deaths).
[[nodiscard]] double death_order(std::span<const double, kAgeBuckets> deaths) noexcept;

struct CostGrouping {
	unsigned max_groups = 1;
	// Physical room for the data as a function of the group count: each group holds one
	// reclaim unit open. space = room - groups x ru_bytes.
	double room = 0;
	double ru_bytes = 0;
	unsigned age_shift = 0;
	// Hysteresis on the projection, in WAF: a grouping other than the lifetime-ratio one is
	// taken only if it is projected to save more than switch_margin, and kept while it
	// saves more than keep_margin.
	double switch_margin = 0.05;
	double keep_margin = 0.01;
	// The lifetime-ratio grouping: keys split where mean lifetimes differ split_ratio times
	// (merge_ratio for keys on different handles now).
	double split_ratio = 2.0;
	double merge_ratio = 1.5;
	// A group with less of the device's writes than this joins the group it costs least to
	// mix with: it does not pay for the reclaim unit it holds open.
	double min_group_share = 0.02;
	// split_by_order() cuts a group only between keys whose death orders differ by at least
	// this much (at 0.5, at least half of one side's deaths fall outside the band in which
	// most of the other side's fall).
	double order_gap = 0.5;
};

// The lifetime-ratio grouping: keys sorted by mean lifetime, a new group where a key lives
// split_ratio times the group's shortest (merge_ratio if it is on another handle than that
// key now); groups below min_group_share join their nearest neighbour, then the nearest
// neighbours merge down to max_groups.
[[nodiscard]] std::vector<std::vector<uint32_t>> group_by_lifetime(std::span<const CostKey> keys,
								   const CostGrouping &g);

// The lifetime-ratio grouping, then splits by how keys die (Grouping::order): while a handle
// is free, a group is cut in two between keys sorted by order (in-order deaths first) where
// the orders on either side of the cut differ by order_gap and both sides take
// min_group_share of the writes; of those cuts, the one with the lowest projected WAF is made
// if it saves switch_margin. Sides already on different handles stay apart while their orders
// differ by half the gap (hysteresis: a regroup mixes what it moves). A key that dies in write
// order mixed with one that does not loses its whole-unit reclaims (docs/placement.md
// "Grouping").
[[nodiscard]] std::vector<std::vector<uint32_t>>
split_by_order(std::span<const CostKey> keys, std::vector<std::vector<uint32_t>> groups,
	       const CostGrouping &g, double *projected_waf = nullptr);

// Groups keys (indexes into keys) by the projection. The lifetime-ratio grouping is the
// default; the fixed policies' (by writer, by class, merged down to max_groups by the
// cheapest pair) replace it where they save more than switch_margin. Within keep_margin the
// grouping with fewer groups wins (the projection does not count the GC stream that mixes
// every group's copies), then the grouping on the handles now (hysteresis). Never returns
// more than max_groups groups.
[[nodiscard]] std::vector<std::vector<uint32_t>> group_by_cost(std::span<const CostKey> keys,
							       const CostGrouping &g,
							       double *projected_waf = nullptr);

}  // namespace kvfdp::placement
