// The greedy-GC projection of a grouping's WAF from its keys' lifetime distributions, and the
// grouping search (docs/placement.md "Grouping by what mixing costs").
#include "placement/mixing_cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "placement/main_handle.hpp"

namespace kvfdp::placement {

unsigned age_shift_for(uint64_t capacity_bytes) noexcept
{
	const uint64_t cap = capacity_bytes ? capacity_bytes : (uint64_t{1} << 30);
	const unsigned msb = 63u - static_cast<unsigned>(__builtin_clzll(cap));
	// 16 octaves above it are kept: the edges must stay below 2^64.
	return std::clamp(msb, 12u, 44u) - 12u;
}

double age_edge(unsigned b, unsigned age_shift) noexcept
{
	if (b == 0)
		return 0;
	const double base = std::ldexp(1.0, static_cast<int>(age_shift + b / 2));
	return b & 1u ? 1.5 * base : base;
}

namespace {

// Bytes of age at grid point i: from 2^(age_shift + 2) (about capacity / 1024) to
// 2^(age_shift + 16) (16 capacities), 12 points per octave.
double grid_age(unsigned i, unsigned age_shift)
{
	return std::ldexp(std::exp2(2.0 + 14.0 * i / (kCostGrid - 1)), static_cast<int>(age_shift));
}

// GC copies per host byte of one distribution when reclaim units are taken at age A: a byte
// valid at A is copied, and its copy is taken again A later, so C(A) = sum over j >= 1 of
// S(jA), S(a) being the share still valid at age a (a point at age p is valid while a < p).
// Past 64 terms the sum is the integral (the midpoint rule). m's points sorted by age.
double copies(const LifeMass &m, double A)
{
	constexpr unsigned kTerms = 64;
	constexpr unsigned kPoints = kAgeBuckets + 1;
	double alive = 0;
	for (unsigned i = 0; i < kPoints; i++)
		alive += m.mass[i];
	double c = 0;
	unsigned i = 0;
	for (unsigned j = 1; j <= kTerms; j++) {
		while (i < kPoints && m.age[i] <= j * A)
			alive -= m.mass[i++];
		if (i == kPoints || alive <= 1e-12)
			return c;
		c += alive;
	}
	const double from = (kTerms + 0.5) * A;
	double rest = 0;
	for (unsigned k = i; k < kPoints; k++)
		if (m.age[k] > from)
			rest += m.mass[k] * (m.age[k] - from);
	return c + rest / A;
}

// A group's log at the valid share v of the units GC takes: the first grid age where its
// valid share (copies / (share + copies)) is v or less, and the space its log takes there
// (A x (share + copies), the bytes written into it while a unit ages A).
struct LogAt {
	double space;
	double copies;
};

LogAt log_at(const CostCurve &c, double v, unsigned age_shift)
{
	auto valid = [&](unsigned i) { return c.copies[i] / (c.share + c.copies[i]); };
	auto at = [&](unsigned i) {
		return LogAt{grid_age(i, age_shift) * (c.share + c.copies[i]), c.copies[i]};
	};
	if (c.share <= 0)
		return {0, 0};
	if (valid(0) <= v)
		return at(0);
	// The first grid age at which it is there, not a value between two: a curve can step
	// (in-order deaths empty a unit at once), and greedy GC takes units that emptied. The
	// log's space is not monotone in the age (taken very young, units hold little but
	// valid data), so of the ages from there on the one whose log takes least space: greedy
	// GC runs the log as lean in copies as the space allows.
	unsigned first = kCostGrid - 1;
	for (unsigned i = 1; i < kCostGrid; i++)
		if (valid(i) <= v) {
			first = i;
			break;
		}
	unsigned best = first;
	for (unsigned i = first + 1; i < kCostGrid; i++)
		if (at(i).space < at(best).space)
			best = i;
	return at(best);
}

}  // namespace

bool life_mass(std::span<const double, kAgeBuckets> deaths, double death_mean, double lifetime,
	       unsigned age_shift, LifeMass &out)
{
	out = LifeMass{};
	double total = 0, centred = 0;
	for (unsigned b = 0; b < kAgeBuckets; b++) {
		const double lo = b ? age_edge(b, age_shift) : age_edge(1, age_shift) / 2;
		out.age[b] = std::sqrt(lo * age_edge(b + 1, age_shift));
		total += deaths[b];
		centred += deaths[b] * out.age[b];
	}
	out.age[kAgeBuckets] = std::numeric_limits<double>::max();
	if (total <= 0) {
		if (!(lifetime > 0))
			return false;
		out.mass[kAgeBuckets] = 1;
		out.age[kAgeBuckets] = lifetime;
		return true;
	}
	const double mean = death_mean > 0 ? death_mean : centred / total;
	const double scale = mean / (centred / total);
	for (unsigned b = 0; b < kAgeBuckets; b++) {
		out.age[b] *= scale;
		out.mass[b] = deaths[b] / total;
	}
	if (lifetime > mean * 1.05) {
		// Mass q at T = 2 x lifetime makes the mean the lifetime: (1-q) mean + q T = lifetime.
		const double t = 2 * lifetime;
		const double q = (lifetime - mean) / (t - mean);
		for (unsigned b = 0; b < kAgeBuckets; b++)
			out.mass[b] *= 1 - q;
		out.mass[kAgeBuckets] = q;
		out.age[kAgeBuckets] = t;
	}
	return true;
}

CostCurve cost_curve(const LifeMass &m, double share, unsigned age_shift)
{
	LifeMass sorted = m;
	std::array<unsigned, kAgeBuckets + 1> order;
	std::iota(order.begin(), order.end(), 0u);
	std::sort(order.begin(), order.end(),
		  [&](unsigned a, unsigned b) { return m.age[a] < m.age[b]; });
	for (unsigned i = 0; i < order.size(); i++) {
		sorted.mass[i] = m.mass[order[i]];
		sorted.age[i] = m.age[order[i]];
	}
	CostCurve c;
	c.share = share;
	for (unsigned i = 0; i < kCostGrid; i++)
		c.copies[i] = share * copies(sorted, grid_age(i, age_shift));
	return c;
}

CostCurve mix(const CostCurve &a, const CostCurve &b)
{
	CostCurve c;
	c.share = a.share + b.share;
	for (unsigned i = 0; i < kCostGrid; i++)
		c.copies[i] = a.copies[i] + b.copies[i];
	return c;
}

double project_waf(std::span<const CostCurve> groups, double space, unsigned age_shift)
{
	double share = 0;
	for (const CostCurve &g : groups)
		share += g.share;
	if (!(share > 0))
		return 1.0;
	auto used = [&](double v) {
		double s = 0;
		for (const CostCurve &g : groups)
			s += log_at(g, v, age_shift).space;
		return s;
	};
	// The space the logs take falls as the valid share at which GC takes units rises.
	constexpr double kMaxValid = 0.999;
	double v = 0;
	if (used(0) > space) {
		double lo = 0, hi = kMaxValid;
		for (int it = 0; it < 40; it++) {
			const double mid = (lo + hi) / 2;
			(used(mid) > space ? lo : hi) = mid;
		}
		v = hi;
	}
	double media = 0;
	for (const CostCurve &g : groups)
		media += g.share + log_at(g, v, age_shift).copies;
	return media / share;
}

namespace {

struct Group {
	std::vector<uint32_t> keys;
	CostCurve curve;
};

double cost_of(const std::vector<Group> &gs, const CostGrouping &p)
{
	std::vector<CostCurve> curves;
	curves.reserve(gs.size());
	for (const Group &g : gs)
		curves.push_back(g.curve);
	const double space = p.room - static_cast<double>(gs.size()) * p.ru_bytes;
	if (!(space > 0))
		return std::numeric_limits<double>::infinity();
	return project_waf(curves, space, p.age_shift);
}

// The projection with groups a and b (a < b) merged.
double cost_merged(const std::vector<Group> &gs, size_t a, size_t b, const CostGrouping &p)
{
	std::vector<CostCurve> curves;
	curves.reserve(gs.size());
	for (size_t i = 0; i < gs.size(); i++)
		if (i == a)
			curves.push_back(mix(gs[a].curve, gs[b].curve));
		else if (i != b)
			curves.push_back(gs[i].curve);
	const double space = p.room - static_cast<double>(curves.size()) * p.ru_bytes;
	if (!(space > 0))
		return std::numeric_limits<double>::infinity();
	return project_waf(curves, space, p.age_shift);
}

void merge(std::vector<Group> &gs, size_t a, size_t b)
{
	gs[a].keys.insert(gs[a].keys.end(), gs[b].keys.begin(), gs[b].keys.end());
	gs[a].curve = mix(gs[a].curve, gs[b].curve);
	gs.erase(gs.begin() + static_cast<std::ptrdiff_t>(b));
}

// The group to merge first, and the cheapest partner for it: a group below min_share of the
// writes (it does not pay for its open reclaim unit), else any pair.
struct Pick {
	size_t a, b;
	double cost;
};
Pick cheapest_merge(const std::vector<Group> &gs, const CostGrouping &p)
{
	size_t small = gs.size();
	double small_share = p.min_group_share;
	for (size_t i = 0; i < gs.size(); i++)
		if (gs[i].curve.share < small_share) {
			small_share = gs[i].curve.share;
			small = i;
		}
	Pick best{0, 1, std::numeric_limits<double>::infinity()};
	for (size_t a = 0; a < gs.size(); a++)
		for (size_t b = a + 1; b < gs.size(); b++) {
			if (small != gs.size() && a != small && b != small)
				continue;
			const double c = cost_merged(gs, a, b, p);
			if (c < best.cost)
				best = {a, b, c};
		}
	return best;
}

bool has_small(const std::vector<Group> &gs, const CostGrouping &p)
{
	return std::any_of(gs.begin(), gs.end(),
			   [&](const Group &g) { return g.curve.share < p.min_group_share; });
}

// Merges the cheapest pair while there are more groups than max_groups or a group below
// min_group_share.
void merge_down(std::vector<Group> &gs, const CostGrouping &p)
{
	while (gs.size() > 1 && (gs.size() > std::max(p.max_groups, 1u) || has_small(gs, p))) {
		const Pick m = cheapest_merge(gs, p);
		merge(gs, m.a, m.b);
	}
}

std::vector<Group> partition_by(std::span<const CostKey> keys, auto &&label)
{
	std::map<uint64_t, size_t> at;
	std::vector<Group> gs;
	for (uint32_t i = 0; i < keys.size(); i++) {
		auto [it, fresh] = at.try_emplace(label(keys[i]), gs.size());
		if (fresh)
			gs.push_back({{}, CostCurve{}});
		Group &g = gs[it->second];
		g.keys.push_back(i);
		g.curve = mix(g.curve, keys[i].curve);
	}
	return gs;
}

}  // namespace

std::vector<std::vector<uint32_t>> group_by_lifetime(std::span<const CostKey> keys,
						     const CostGrouping &p)
{
	std::vector<uint32_t> order(keys.size());
	std::iota(order.begin(), order.end(), 0u);
	std::sort(order.begin(), order.end(),
		  [&](uint32_t a, uint32_t b) { return keys[a].life < keys[b].life; });
	std::vector<std::vector<uint32_t>> groups;
	for (uint32_t k : order) {
		if (!groups.empty()) {
			const CostKey &first = keys[groups.back().front()];
			const double ratio =
				keys[k].handle == first.handle ? p.split_ratio : p.merge_ratio;
			if (keys[k].life < first.life * ratio) {
				groups.back().push_back(k);
				continue;
			}
		}
		groups.push_back({k});
	}
	auto share_of = [&](const std::vector<uint32_t> &g) {
		double s = 0;
		for (uint32_t k : g)
			s += keys[k].curve.share;
		return s;
	};
	auto life_of = [&](const std::vector<uint32_t> &g) {
		// write-share-weighted geometric mean
		double s = 0, lw = 0;
		for (uint32_t k : g) {
			s += keys[k].curve.share;
			lw += keys[k].curve.share * std::log(std::max(keys[k].life, 1.0));
		}
		return s > 0 ? std::exp(lw / s) : 1.0;
	};
	// A group too small to pay for an open RU joins its nearest neighbour; then merge the
	// closest neighbours until the groups fit the handles.
	const size_t max_groups = std::max(p.max_groups, 1u);
	while (groups.size() > 1) {
		size_t worst = groups.size();
		double worst_share = p.min_group_share;
		for (size_t g = 0; g < groups.size(); g++) {
			const double s = share_of(groups[g]);
			if (s < worst_share) {
				worst_share = s;
				worst = g;
			}
		}
		if (worst == groups.size() && groups.size() <= max_groups)
			break;
		size_t a = 0;
		if (worst != groups.size()) {
			if (worst + 1 == groups.size())
				a = worst - 1;
			else if (worst > 0) {
				const double l = life_of(groups[worst]);
				a = l / life_of(groups[worst - 1]) < life_of(groups[worst + 1]) / l
					    ? worst - 1
					    : worst;
			}
		} else {
			double best = std::numeric_limits<double>::infinity();
			for (size_t g = 0; g + 1 < groups.size(); g++) {
				const double r = life_of(groups[g + 1]) / life_of(groups[g]);
				if (r < best) {
					best = r;
					a = g;
				}
			}
		}
		groups[a].insert(groups[a].end(), groups[a + 1].begin(), groups[a + 1].end());
		groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(a) + 1);
	}
	return groups;
}

namespace {

std::vector<Group> with_curves(std::span<const CostKey> keys,
			       std::vector<std::vector<uint32_t>> parts)
{
	std::vector<Group> gs;
	for (auto &part : parts) {
		Group g{std::move(part), CostCurve{}};
		for (uint32_t k : g.keys)
			g.curve = mix(g.curve, keys[k].curve);
		gs.push_back(std::move(g));
	}
	return gs;
}

// The handle that most of a side's writes go to now.
uint16_t main_handle(std::span<const CostKey> keys, const std::vector<uint32_t> &side)
{
	return main_handle_of(
		side, [&](uint32_t k) { return keys[k].handle; },
		[&](uint32_t k) { return keys[k].curve.share; });
}

struct Cut {
	size_t group;
	Group a, b;  // the two sides, with their curves
	double cost;
};

// Whether every key of ks has its evidence (CostKey::evidenced).
bool all_evidenced(std::span<const CostKey> keys, const std::vector<uint32_t> &ks)
{
	return std::all_of(ks.begin(), ks.end(), [&](uint32_t k) { return keys[k].evidenced; });
}

// The best cut of group g along its keys' order, if it beats `now` by its margin.
void best_cut(std::span<const CostKey> keys, const std::vector<Group> &gs, size_t g, double now,
	      const CostGrouping &p, Cut &best)
{
	std::vector<uint32_t> ks = gs[g].keys;
	std::stable_sort(ks.begin(), ks.end(),
			 [&](uint32_t x, uint32_t y) { return keys[x].order > keys[y].order; });
	std::vector<Group> trial = gs;
	trial.push_back({});
	for (size_t cut = 1; cut < ks.size(); cut++) {
		Group &a = trial[g];
		Group &b = trial.back();
		a.keys.assign(ks.begin(), ks.begin() + static_cast<std::ptrdiff_t>(cut));
		b.keys.assign(ks.begin() + static_cast<std::ptrdiff_t>(cut), ks.end());
		// Only where the two sides die clearly differently: between keys of close order the
		// projection's noise is larger than what it projects (docs/placement.md). Sides on
		// different handles now stay apart down to half the gap, as with the margins.
		const bool apart = main_handle(keys, a.keys) != main_handle(keys, b.keys);
		const double gap = keys[ks[cut - 1]].order - keys[ks[cut]].order;
		if (gap < (apart ? p.order_gap / 2 : p.order_gap))
			continue;
		// A new cut only on orders that have settled (CostKey::evidenced).
		if (!apart && !(all_evidenced(keys, a.keys) && all_evidenced(keys, b.keys)))
			continue;
		a.curve = b.curve = CostCurve{};
		for (uint32_t k : a.keys)
			a.curve = mix(a.curve, keys[k].curve);
		for (uint32_t k : b.keys)
			b.curve = mix(b.curve, keys[k].curve);
		if (a.curve.share < p.min_group_share || b.curve.share < p.min_group_share)
			continue;
		// A new split must be projected to save switch_margin; one already made stays while
		// the orders differ, whatever the projection says now: moving keys back mixes them
		// with what was written apart, and the projection's swings between recomputes are
		// larger than the gap it would close.
		const double cost = cost_of(trial, p);
		if ((apart || cost < now - p.switch_margin) && cost < best.cost)
			best = {g, a, b, cost};
	}
}

// The same grouping, whatever the order of groups and keys.
bool same(std::vector<Group> a, std::vector<Group> b)
{
	auto canon = [](std::vector<Group> &gs) {
		std::vector<std::vector<uint32_t>> out;
		for (Group &g : gs) {
			std::sort(g.keys.begin(), g.keys.end());
			out.push_back(g.keys);
		}
		std::sort(out.begin(), out.end());
		return out;
	};
	return canon(a) == canon(b);
}

}  // namespace

double death_order(std::span<const double, kAgeBuckets> deaths) noexcept
{
	double total = 0, pair = 0;
	for (unsigned b = 0; b < kAgeBuckets; b++) {
		total += deaths[b];
		if (b + 1 < kAgeBuckets)
			pair = std::max(pair, deaths[b] + deaths[b + 1]);
	}
	return total > 0 ? pair / total : 1.0;
}

std::vector<std::vector<uint32_t>> split_by_order(std::span<const CostKey> keys,
						  std::vector<std::vector<uint32_t>> groups,
						  const CostGrouping &p, double *projected_waf)
{
	std::vector<Group> gs = with_curves(keys, std::move(groups));
	double now = gs.empty() ? 1.0 : cost_of(gs, p);
	while (gs.size() < std::max(p.max_groups, 1u)) {
		Cut best{gs.size(), {}, {}, std::numeric_limits<double>::infinity()};
		for (size_t g = 0; g < gs.size(); g++)
			best_cut(keys, gs, g, now, p, best);
		if (best.group == gs.size())
			break;
		gs[best.group] = std::move(best.a);
		gs.push_back(std::move(best.b));
		now = best.cost;
	}
	if (projected_waf)
		*projected_waf = now;
	std::vector<std::vector<uint32_t>> out;
	out.reserve(gs.size());
	for (Group &g : gs)
		out.push_back(std::move(g.keys));
	return out;
}

std::vector<std::vector<uint32_t>> group_by_cost(std::span<const CostKey> keys,
						 const CostGrouping &p, double *projected_waf)
{
	if (keys.empty()) {
		if (projected_waf)
			*projected_waf = 1.0;
		return {};
	}
	std::vector<Group> ratio = with_curves(keys, group_by_lifetime(keys, p));
	std::vector<Group> current =
		partition_by(keys, [](const CostKey &k) { return uint64_t{k.handle}; });
	std::vector<Group> writer = partition_by(keys, [](const CostKey &k) { return k.writer; });
	std::vector<Group> cls =
		partition_by(keys, [](const CostKey &k) { return uint64_t{k.cls}; });
	for (auto *gs : {&writer, &cls})
		merge_down(*gs, p);
	struct Cand {
		std::vector<Group> *groups;
		double cost;
	};
	std::vector<Cand> cands;
	for (auto *gs : {&ratio, &cls, &writer})
		cands.push_back({gs, cost_of(*gs, p)});
	// The default is the lifetime-ratio grouping; a fixed policy's replaces it where it
	// saves more than switch_margin.
	Cand pick = cands[0];
	for (const Cand &c : cands)
		if (c.cost < pick.cost - p.switch_margin)
			pick = c;
	// The projection does not see what more groups cost beyond their open units (the GC
	// stream that mixes every group's copies), so within keep_margin fewer groups win; and
	// the grouping on the handles now stays while it is within keep_margin (hysteresis).
	for (const Cand &c : cands)
		if (c.groups->size() < pick.groups->size() && c.cost <= pick.cost + p.keep_margin)
			pick = c;
	for (const Cand &c : cands)
		if (same(current, *c.groups) && c.cost <= pick.cost + p.keep_margin)
			pick = c;
	std::vector<Group> *chosen = pick.groups;
	const double pick_cost = pick.cost;
	if (projected_waf)
		*projected_waf = pick_cost;
	std::vector<std::vector<uint32_t>> out;
	out.reserve(chosen->size());
	for (Group &g : *chosen)
		out.push_back(std::move(g.keys));
	return out;
}

}  // namespace kvfdp::placement
