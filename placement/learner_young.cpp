// Young writers, of which nothing is measured yet: the young-writer split, the last step of
// the learner's grouping (learner_group.cpp), which parts their keys by class, as `hint` places
// them, away from the groups of measured keys; and the grouping by class while writers are
// replaced faster than they are measured (churning()). docs/placement.md "The young-writer
// split" and "Writers replaced faster than they are measured" say why.
#include "placement/learner_internal.hpp"

#include <algorithm>
#include <unordered_map>

namespace kvfdp::placement {

using namespace learner_detail;

// Per key, whether its writer is young: nothing is known of it, no key first seen before the
// last recompute, none whose data has begun to die (its lifetime has a measure), none the last
// recompute's pins placed (the config named it).
std::vector<uint8_t> Learner::young_keys(const std::vector<Cand> &cands) const
{
	std::vector<uint64_t> writer(cands.size());
	std::unordered_map<uint64_t, bool> known;
	for (uint32_t c = 0; c < cands.size(); c++) {
		const KeyState &st = state_[cands[c].slot];
		const Key k = key_of(slots_[cands[c].slot].tag.load(std::memory_order_relaxed));
		writer[c] = k.writer;
		known[k.writer] |= !(st.seen_written > 0 && st.first_write >= earlier_clock_[0]) ||
				   st.seen_died > 0 || pin_in(recomputed_pins_, k).has_value();
	}
	std::vector<uint8_t> is_young(cands.size());
	for (uint32_t c = 0; c < cands.size(); c++)
		is_young[c] = !known.at(writer[c]);
	return is_young;
}

// The groups none of whose keys wrote at any of the last three recomputes (writers that are
// gone) become one group.
void Learner::merge_gone(std::vector<std::vector<uint32_t>> &groups,
			 const std::vector<Cand> &cands) const
{
	const uint64_t idle_before = earlier_clock_[1];
	std::vector<uint32_t> idle;
	std::erase_if(groups, [&](const std::vector<uint32_t> &g) {
		const bool gone = std::all_of(g.begin(), g.end(), [&](uint32_t c) {
			return state_[cands[c].slot].last_write < idle_before;
		});
		if (gone)
			idle.insert(idle.end(), g.begin(), g.end());
		return gone;
	});
	if (!idle.empty())
		groups.push_back(std::move(idle));
}

// Whether writers are replaced faster than they are measured: the share of the writes since
// the last recompute that young writers made (at the rate each writes now), averaged with a
// weight of 1/5 per recompute, is above churn_by_class. A writer is young for two recomputes
// at most, so on a host whose writers keep their ids the average stays below 0.36 after a
// start or a new writer; only writers replaced recompute after recompute raise it. Their
// ids then carry no measure the lifetime rule could use: the groups it makes hold the data of
// ids that are gone, and each new id starts where its class's young part is. By class, old
// and new ids of a class share a group, as `hint` places them.
bool Learner::churning(const std::vector<Cand> &cands, const std::vector<uint8_t> &young)
{
	if (!(cfg_.churn_by_class > 0) || last_clock_ < cfg_.ru_bytes)
		return false;
	double all = 0, of_young = 0;
	for (uint32_t c = 0; c < cands.size(); c++) {
		const KeyState &st = state_[cands[c].slot];
		if (st.last_write != last_clock_)
			continue;
		const double r = rate_share(st, last_clock_);
		all += r;
		of_young += young[c] != 0 ? r : 0.0;
	}
	constexpr double kWeight = 0.2;  // about the last five recomputes
	if (all > 0)
		young_write_share_ += kWeight * (of_young / all - young_write_share_);
	return young_write_share_ > cfg_.churn_by_class;
}

bool Learner::churn_grouping() const
{
	std::lock_guard lock(mu_);
	return churn_grouping_;
}

// A writer is young while every key of it was first seen at this recompute or the one before,
// none has seen its data die and no pin placed it: nothing is measured of it yet, and its
// class is all that is known. Its keys that sit in a group of measured keys (where a new key of
// its class started, or the lifetime rule put it) are parted by class, one part per class whose
// young keys take min_group_share of the writes at their rate, largest first while they fit
// the handles and the class split's budget; a new key of such a class starts on its part's
// handle (publish()). To make room, groups none of whose keys wrote at any of the last three
// recomputes (writers that are gone: they write nothing, and a handle each buys nothing)
// become one group first, if a part is then cut.
void Learner::split_young(std::vector<std::vector<uint32_t>> &groups,
			  const std::vector<Cand> &cands, const std::vector<uint8_t> &is_young,
			  size_t max_groups)
{
	const uint64_t now = last_clock_;
	if (!(cfg_.class_split_room > 0) || cfg_.ru_bytes == 0 || groups.empty() ||
	    now < cfg_.ru_bytes)
		return;
	auto young = [&](uint32_t c) { return is_young[c] != 0; };

	double total = 0;
	for (const Cand &c : cands)
		total += c.share;
	std::array<std::vector<uint32_t>, kNumClasses> part;
	std::array<double, kNumClasses> share{};
	for (const auto &g : groups) {
		if (std::all_of(g.begin(), g.end(), young))
			continue;  // a group of young keys only: already apart
		for (uint32_t c : g)
			if (young(c)) {
				part[cands[c].cls].push_back(c);
				share[cands[c].cls] += rate_share(state_[cands[c].slot], now);
			}
	}
	std::vector<unsigned> cut;  // classes, largest share first
	for (unsigned k = 0; k < kNumClasses; k++)
		if (!part[k].empty() && share[k] >= cfg_.min_group_share * total)
			cut.push_back(k);
	if (cut.empty())
		return;
	std::stable_sort(cut.begin(), cut.end(),
			 [&](unsigned a, unsigned b) { return share[a] > share[b]; });

	const size_t limit = std::min(max_groups, split_budget());
	std::array<bool, kNumClasses> cls_cut{};
	auto moves = [&](uint32_t c) { return cls_cut[cands[c].cls] && young(c); };
	// Whether the first n parts fit beside the groups gs leaves.
	auto fits = [&](const std::vector<std::vector<uint32_t>> &gs, size_t n) {
		cls_cut.fill(false);
		for (size_t i = 0; i < n; i++)
			cls_cut[cut[i]] = true;
		size_t left = 0;
		for (const auto &g : gs)
			left += !std::all_of(g.begin(), g.end(), moves);
		return left + n <= limit;
	};
	std::vector<std::vector<uint32_t>> out = groups;
	if (!fits(out, cut.size()))
		merge_gone(out, cands);
	size_t n = cut.size();
	while (n > 0 && !fits(out, n))
		n--;
	if (n == 0)
		return;  // nothing cut, nothing merged
	cut.resize(n);   // cls_cut holds these n
	for (auto &g : out)
		std::erase_if(g, moves);
	std::erase_if(out, [](const std::vector<uint32_t> &g) { return g.empty(); });
	groups = std::move(out);
	for (unsigned k : cut) {
		young_group_[k] = static_cast<int>(groups.size());
		groups.push_back(part[k]);
	}
}

}  // namespace kvfdp::placement
