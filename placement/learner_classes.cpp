// The class split's step of recompute() (step 2b, class_split.hpp decides): each key's
// measures as the split reads them, the keys whose writer relabels, and the room in open
// reclaim units the class and young-writer splits may take.
#include "placement/learner_internal.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <utility>

#include "placement/class_split.hpp"

namespace kvfdp::placement {

using namespace learner_detail;

// The groups the class and young-writer splits may leave in all: the open reclaim units
// class_split_room of the over-provisioned space holds.
size_t Learner::split_budget() const
{
	return static_cast<size_t>(cfg_.class_split_room * cfg_.op *
				   static_cast<double>(cfg_.capacity_bytes) /
				   static_cast<double>(cfg_.ru_bytes));
}

// Step 2b: the class split (class_split.hpp) within the groups, all keys included.
void Learner::split_classes(std::vector<std::vector<uint32_t>> &groups,
			    const std::vector<Cand> &cands, size_t max_groups)
{
	// Nothing is split before the device has written a reclaim unit: the learner starts as
	// `none`, and before that no write share says anything.
	const uint64_t now = last_clock_;  // the clock fold() stamped first and last writes with
	if (!(cfg_.class_split_room > 0) || cfg_.ru_bytes == 0 || groups.empty() ||
	    now < cfg_.ru_bytes)
		return;
	// A writer part is cut only within its keys' first half capacity of device writes, from
	// the second recompute that sees them on (or kept once cut): by then its write share has
	// shown and what it wrote mixed is little, and an id that lives less than a regroup (a
	// restarted writer with no stable identity) is never cut.
	constexpr double kWriterYoung = 0.5;
	std::vector<ClassKey> keys(cands.size());
	for (uint32_t c = 0; c < cands.size(); c++) {
		const KeyState &st = state_[cands[c].slot];
		const Key k = key_of(slots_[cands[c].slot].tag.load(std::memory_order_relaxed));
		// Seen written at an earlier recompute than this one.
		const bool seen_before = st.seen_written > 0 && now > st.first_write;
		const bool writing = st.last_write == last_clock_ && seen_before;
		keys[c] = {k.writer,
			   k.cls,
			   writing ? rate_share(st, now) : cands[c].share,
			   cands[c].life,
			   death_order(st.ages),
			   evidenced(st, cands[c].life, now),
			   order_known(st) && cands[c].life > 0,
			   st.class_given_up,
			   st.writer_given_up || !cfg_.writer_split,
			   st.writer_cut || (seen_before &&
					     static_cast<double>(now - st.first_write) <
						     kWriterYoung * static_cast<double>(
									    cfg_.capacity_bytes)),
			   cands[c].handle,
			   writing,
			   st.class_cut,
			   st.seen_written > 0 && st.first_write == now,
			   st.went_idle};
	}
	mark_relabels(keys, cands);
	ClassSplitParams p;
	p.max_groups = max_groups;
	p.budget = split_budget();
	p.min_group_share = cfg_.min_group_share;
	p.alike_order = cfg_.alike_order;
	p.alike_ratio = cfg_.alike_ratio;
	p.differ_order = cfg_.order_gap / 4;
	p.differ_ratio = cfg_.merge_ratio;
	ClassSplitResult r = split_by_class(keys, std::move(groups), p);
	for (uint32_t c : r.given_up)
		state_[cands[c].slot].class_given_up = true;
	for (uint32_t c = 0; c < cands.size(); c++)
		state_[cands[c].slot].writer_cut = state_[cands[c].slot].class_cut = false;
	for (uint32_t c : r.class_cut)
		state_[cands[c].slot].class_cut = true;
	for (uint32_t c : r.writer_cut)
		state_[cands[c].slot].writer_cut = true;
	for (uint32_t c : r.writer_given_up)
		state_[cands[c].slot].writer_given_up = true;
	groups = std::move(r.groups);
}

// A key that has written nothing for as long as it takes to write a reclaim unit at its
// share, while a key of its writer wrote since the last recompute, went idle: its writer
// relabels its data (class_split.hpp). One recompute without writes is not enough: a class
// written in bursts (vLLM's reused blocks) would look relabelled. Kept for good, in memory: a
// restarted kvfdpd sees it again when the class stays idle.
void Learner::mark_relabels(std::vector<ClassKey> &keys, const std::vector<Cand> &cands)
{
	std::unordered_set<uint64_t> writing;
	for (const ClassKey &k : keys)
		if (k.writing)
			writing.insert(k.writer);
	for (uint32_t c = 0; c < keys.size(); c++) {
		KeyState &st = state_[cands[c].slot];
		const double pause = static_cast<double>(last_clock_ - st.last_write);
		if (st.seen_written > 0 && writing.contains(keys[c].writer) &&
		    pause * cands[c].share >= static_cast<double>(cfg_.ru_bytes))
			st.went_idle = keys[c].went_idle = true;
	}
}

}  // namespace kvfdp::placement
