// split_by_class: the per-hint, then per-writer split within the learner's groups (class_split.hpp).
#include "placement/class_split.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>

#include "placement/classes.hpp"
#include "placement/main_handle.hpp"

namespace kvfdp::placement {

namespace {

// Share-weighted death order and log lifetime of some keys, and whether all have their
// evidence, and their death orders known.
struct Part {
	double share = 0, order = 0, log_life = 0;
	bool evidenced = true;
	bool order_known = true;
	bool fresh = true;  // every key is ClassKey::fresh
	std::vector<uint32_t> keys;

	void add(const ClassKey &k, uint32_t i)
	{
		share += k.share;
		order += k.share * k.order;
		log_life += k.share * std::log(std::max(k.life, 1.0));
		evidenced = evidenced && k.evidenced;
		order_known = order_known && k.order_known;
		fresh = fresh && k.fresh;
		keys.push_back(i);
	}
	[[nodiscard]] bool alike(const Part &o, const ClassSplitParams &p) const
	{
		return within(o, p.alike_order, p.alike_ratio);
	}
	[[nodiscard]] bool differs(const Part &o, const ClassSplitParams &p) const
	{
		return share > 0 && o.share > 0 && !within(o, p.differ_order, p.differ_ratio);
	}
	// Every key was in a part this stage cut at the last recompute (ClassKey::class_cut).
	[[nodiscard]] bool was_cut(std::span<const ClassKey> all) const
	{
		return std::all_of(keys.begin(), keys.end(),
				   [&](uint32_t i) { return all[i].class_cut; });
	}
	// Death orders within `order` and mean lifetimes within a factor `ratio` of o's.
	[[nodiscard]] bool within(const Part &o, double dorder, double ratio) const
	{
		if (!(share > 0 && o.share > 0))
			return false;
		return std::fabs(order / share - o.order / o.share) < dorder &&
		       std::fabs(log_life / share - o.log_life / o.share) < std::log(ratio);
	}
};

unsigned class_index(uint8_t cls)
{
	return cls < kNumClasses ? cls : 0u;
}

// One stage's parts to cut off (and, per cut, whether it was made on measured death orders),
// and the keys whose part was given up.
struct Stage {
	std::vector<std::vector<uint32_t>> cuts;
	std::vector<uint8_t> on_orders;
	std::vector<uint32_t> given_up;
};

// When a stage cuts a part: from the start (`now`); from the start until the part's and the
// main label's death orders are known, then only where they die differently (`until_known`);
// or only once they are known and die differently (`known`).
enum class Rule : uint8_t { now, until_known, known };

// Within each group, the keys are parted by label (a class, a writer); each part of the
// movable keys other than the group's main label (most of its writes; the lowest label on a
// tie) is cut off if it takes min_group_share and leaves the group a key, unless it and the
// main label's part have their evidence and die alike: then it is given up. With same_share
// > 0, parts whose write shares are within that relative difference of each other count as
// one part (and one of the main's as the main): labels that write the same bytes at the same
// rate are shards or replicas of one job (a tensor-parallel engine's ranks), whose data dies
// together, and an open unit each buys nothing. rule_of(part) says when a part is cut (Rule);
// once the death orders are known, a part cut because they differ (differ_order,
// differ_ratio) stays cut (ClassKey::class_cut) until they die alike.
template <class Label, class Movable, class RuleOf>
Stage cut_parts(std::span<const ClassKey> keys, const std::vector<std::vector<uint32_t>> &groups,
		double total, const ClassSplitParams &p, double same_share, Label label,
		Movable movable, RuleOf rule_of)
{
	Stage st;
	for (const std::vector<uint32_t> &g : groups) {
		std::map<uint64_t, Part> all, mov;
		for (uint32_t i : g)
			all[label(keys[i])].add(keys[i], i);
		uint64_t main = 0;
		double main_share = -1;
		for (const auto &[l, part] : all)
			if (part.share > main_share) {
				main = l;
				main_share = part.share;
			}
		const Part &m = all.at(main);
		const uint16_t main_handle = main_handle_of(
			m.keys, [&](uint32_t i) { return keys[i].handle; },
			[&](uint32_t i) { return keys[i].share; });
		for (uint32_t i : g)
			if (movable(keys[i], main_handle))
				mov[label(keys[i])].add(keys[i], i);
		auto same = [&](double a, double b) {
			return same_share > 0 && std::fabs(a - b) <= same_share * std::max(a, b);
		};
		std::vector<std::pair<const Part *, double>> parts;  // a part, its label's share
		for (const auto &[l, part] : mov)
			if (l != main && !same(all.at(l).share, m.share))
				parts.emplace_back(&part, all.at(l).share);
		std::stable_sort(parts.begin(), parts.end(),
				 [](const auto &a, const auto &b) { return a.second > b.second; });
		std::vector<Part> merged;
		double last = -1;
		for (const auto &[part, share] : parts) {
			if (merged.empty() || !same(share, last))
				merged.emplace_back();
			for (uint32_t i : part->keys)
				merged.back().add(keys[i], i);
			last = share;
		}
		for (const Part &part : merged) {
			if (part.evidenced && m.evidenced && part.alike(m, p)) {
				st.given_up.insert(st.given_up.end(), part.keys.begin(),
						   part.keys.end());
				continue;
			}
			const Rule rule = rule_of(part);
			const bool known = part.order_known && m.order_known;
			if (rule != Rule::now &&
			    (known ? !(part.differs(m, p) || part.was_cut(keys))
				   : rule == Rule::known))
				continue;
			if ((part.share >= p.min_group_share * total || part.fresh) &&
			    part.keys.size() < g.size()) {
				st.cuts.push_back(part.keys);
				st.on_orders.push_back(rule != Rule::now && known);
			}
		}
	}
	return st;
}

// The groups with the cuts moved to groups of their own.
void apply(std::vector<std::vector<uint32_t>> &groups, std::vector<std::vector<uint32_t>> cuts,
	   size_t nkeys)
{
	std::vector<uint8_t> moved(nkeys, 0);
	for (const auto &cut : cuts)
		for (uint32_t i : cut)
			moved[i] = 1;
	for (auto &g : groups)
		std::erase_if(g, [&](uint32_t i) { return moved[i] != 0; });
	for (auto &cut : cuts)
		groups.push_back(std::move(cut));
}

// What split_by_class needs to know of the writers: which label their data with one class
// only, which relabel (ClassKey::went_idle), and the classes of writers of several classes of
// which some key's death order is known.
struct Writers {
	std::unordered_map<uint64_t, uint32_t> classes_of;  // writer -> class bit mask
	std::unordered_map<uint64_t, bool> relabels;
	std::array<bool, kNumClasses> class_known{};
	double total = 0;  // the keys' shares

	explicit Writers(std::span<const ClassKey> keys)
	{
		for (const ClassKey &k : keys) {
			classes_of[k.writer] |= 1u << class_index(k.cls);
			relabels[k.writer] = relabels[k.writer] || k.went_idle;
			total += k.share;
		}
		for (const ClassKey &k : keys)
			if (!one_class(k) && k.order_known)
				class_known[class_index(k.cls)] = true;
	}
	[[nodiscard]] bool one_class(const ClassKey &k) const
	{
		const uint32_t m = classes_of.at(k.writer);
		return (m & (m - 1)) == 0;
	}
	// When a class part of writers of several classes is cut: on measurement only where a
	// writer of it relabels or the device has measured how its class dies, else from the start
	// until measured.
	[[nodiscard]] Rule rule(const Part &part, std::span<const ClassKey> keys) const
	{
		const bool wait = std::any_of(part.keys.begin(), part.keys.end(), [&](uint32_t i) {
			return relabels.at(keys[i].writer) || class_known[class_index(keys[i].cls)];
		});
		return wait ? Rule::known : Rule::until_known;
	}
};

}  // namespace

ClassSplitResult split_by_class(std::span<const ClassKey> keys,
				std::vector<std::vector<uint32_t>> groups,
				const ClassSplitParams &p)
{
	ClassSplitResult out;
	const Writers writers(keys);
	const double total = writers.total;
	auto one_class = [&](const ClassKey &k) { return writers.one_class(k); };
	// All or nothing, per stage: a split made only in part would leave together, in no
	// chosen way, the parts it did not cut. Where it does not fit, nothing is given up either.
	const size_t limit = std::min(p.max_groups, p.budget);
	out.groups = std::move(groups);
	auto by_class = [](const ClassKey &k) { return uint64_t{class_index(k.cls)}; };
	auto at_once = [](const Part &) { return Rule::now; };
	Stage first = cut_parts(
		keys, out.groups, total, p, 0.0, by_class,
		[&](const ClassKey &k, uint16_t) { return one_class(k) && !k.given_up; }, at_once);
	// The keys of a class new to the device (a first-stage cut of fresh keys only): their
	// writers are parted at once too, as the class was.
	std::vector<uint8_t> new_class(keys.size(), 0);
	if (out.groups.size() + first.cuts.size() <= limit) {
		out.given_up = std::move(first.given_up);
		for (const auto &cut : first.cuts)
			if (std::all_of(cut.begin(), cut.end(),
					[&](uint32_t i) { return keys[i].fresh; }))
				for (uint32_t i : cut)
					new_class[i] = 1;
		apply(out.groups, std::move(first.cuts), keys.size());
	}
	Stage measured = cut_parts(
		keys, out.groups, total, p, 0.0, by_class,
		[&](const ClassKey &k, uint16_t) { return !one_class(k) && !k.given_up; },
		[&](const Part &part) { return writers.rule(part, keys); });
	if (out.groups.size() + measured.cuts.size() <= limit) {
		out.given_up.insert(out.given_up.end(), measured.given_up.begin(),
				    measured.given_up.end());
		for (size_t c = 0; c < measured.cuts.size(); c++)
			if (measured.on_orders[c] != 0)
				out.class_cut.insert(out.class_cut.end(), measured.cuts[c].begin(),
						     measured.cuts[c].end());
		apply(out.groups, std::move(measured.cuts), keys.size());
	}
	Stage by_writer = cut_parts(
		keys, out.groups, total, p, p.same_share,
		[](const ClassKey &k) { return k.writer; },
		[&](const ClassKey &k, uint16_t main_handle) {
			return one_class(k) && !k.writer_given_up &&
			       (k.writer_may_cut ||
				new_class[static_cast<size_t>(&k - keys.data())] ||
				(k.writing && k.handle != main_handle));
		},
		at_once);
	if (out.groups.size() + by_writer.cuts.size() <= limit) {
		out.writer_given_up = std::move(by_writer.given_up);
		for (const auto &cut : by_writer.cuts)
			out.writer_cut.insert(out.writer_cut.end(), cut.begin(), cut.end());
		apply(out.groups, std::move(by_writer.cuts), keys.size());
	}
	return out;
}

}  // namespace kvfdp::placement
