// split_by_class: the per-hint split within the learner's groups (class_split.hpp).
#include "placement/class_split.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "placement/classes.hpp"

namespace kvfdp::placement {

namespace {

// Share-weighted death order and log lifetime of some keys, and whether all have their
// evidence.
struct Part {
	double share = 0, order = 0, log_life = 0;
	bool evidenced = true;
	std::vector<uint32_t> keys;

	void add(const ClassKey &k, uint32_t i)
	{
		share += k.share;
		order += k.share * k.order;
		log_life += k.share * std::log(std::max(k.life, 1.0));
		evidenced = evidenced && k.evidenced;
		keys.push_back(i);
	}
	[[nodiscard]] bool alike(const Part &o, const ClassSplitParams &p) const
	{
		if (!(share > 0 && o.share > 0))
			return false;
		return std::fabs(order / share - o.order / o.share) < p.order_close &&
		       std::fabs(log_life / share - o.log_life / o.share) < std::log(p.merge_ratio);
	}
};

unsigned class_index(uint8_t cls)
{
	return cls < kNumClasses ? cls : 0u;
}

}  // namespace

ClassSplitResult split_by_class(std::span<const ClassKey> keys,
				std::vector<std::vector<uint32_t>> groups,
				const ClassSplitParams &p)
{
	ClassSplitResult out;
	// Writers that label their data with one class only.
	std::unordered_map<uint64_t, uint32_t> classes_of;  // writer -> class bit mask
	double total = 0;
	for (const ClassKey &k : keys) {
		classes_of[k.writer] |= 1u << class_index(k.cls);
		total += k.share;
	}
	auto one_class = [&](const ClassKey &k) {
		const uint32_t m = classes_of.at(k.writer);
		return (m & (m - 1)) == 0;
	};

	std::vector<std::vector<uint32_t>> cuts;  // the parts to cut off
	std::vector<uint32_t> given_up;
	for (size_t g = 0; g < groups.size(); g++) {
		std::array<Part, kNumClasses> all{}, movable{};
		for (uint32_t i : groups[g]) {
			const unsigned c = class_index(keys[i].cls);
			all[c].add(keys[i], i);
			if (one_class(keys[i]) && !keys[i].given_up)
				movable[c].add(keys[i], i);
		}
		unsigned main = 0;
		for (unsigned c = 1; c < kNumClasses; c++)
			if (all[c].share > all[main].share)
				main = c;
		std::vector<unsigned> parts;
		for (unsigned c = 0; c < kNumClasses; c++)
			if (c != main && !movable[c].keys.empty())
				parts.push_back(c);
		std::sort(parts.begin(), parts.end(), [&](unsigned a, unsigned b) {
			return movable[a].share > movable[b].share;
		});
		for (unsigned c : parts) {
			const Part &part = movable[c];
			if (part.evidenced && all[main].evidenced && part.alike(all[main], p)) {
				given_up.insert(given_up.end(), part.keys.begin(), part.keys.end());
				continue;
			}
			if (part.share >= p.min_group_share * total &&
			    part.keys.size() < groups[g].size())
				cuts.push_back(part.keys);
		}
	}
	// All or nothing: a split made only in part would leave together, in no chosen way,
	// the classes it did not cut. Where it does not fit, nothing is given up either.
	out.groups = std::move(groups);
	if (out.groups.size() + cuts.size() > std::min(p.max_groups, p.budget))
		return out;
	out.given_up = std::move(given_up);
	if (cuts.empty())
		return out;
	std::vector<uint8_t> moved(keys.size(), 0);
	for (const auto &cut : cuts)
		for (uint32_t i : cut)
			moved[i] = 1;
	for (auto &g : out.groups)
		std::erase_if(g, [&](uint32_t i) { return moved[i] != 0; });
	for (auto &cut : cuts)
		out.groups.push_back(std::move(cut));
	return out;
}

}  // namespace kvfdp::placement
