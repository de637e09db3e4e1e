// The class split: the split a per-hint policy makes, taken from the first recompute on and
// given up where measurement shows it buys nothing. A pure function over the learner's keys
// and groups: the learner (learner_group.cpp) keeps the state it needs (each key's first write,
// and whether its part was given up), this file decides. docs/placement.md "The class
// split" says why.
//
// Within each group the learner made, the keys of writers that give all their data one hint
// class (a workload bucket: one class per stream, as LMCache's per-bucket placement IDs are)
// are cut off by class, one part per class other than the group's main class (the class
// with most of the group's writes), while:
// - every part takes min_group_share of the device's writes, or all its keys are fresh (first
//   seen at this recompute: their shares are those of a few writes and say nothing yet, so a
//   class new to the device starts apart, as hint places it, and the next recompute judges
//   it by its share; joined to a group meanwhile, it writes mixed until then);
// - the groups, the parts included, fit in the handles and in `budget` (what the spare
//   room holds in open reclaim units); a split that does not fit is not made at all;
// - the part has not been given up.
// A part is given up for good once its keys and the main class's are all `evidenced` (the
// learner: each has lived two of its lifetimes since its first write and seen half its
// writes die, so its death order has settled) and they die alike: death orders within
// alike_order, mean lifetimes within alike_ratio. Alike means nearly the same: a part kept
// apart costs one open unit, one given up wrongly mixes for the rest of the run.
// Then the keys of writers that label their data with several classes are parted by class
// the same way, until their death orders are known (`order_known`: a quarter of what each
// wrote has died, what a new cut of the order split needs). From then on a part stays cut
// only where it and the main class die differently (differ_order, differ_ratio: what the
// lifetime and order rules' hysteresis keeps apart), or it was cut so at the last recompute;
// it is given up, as above, once they are evidenced and die alike. A writer that relabels
// (`went_idle`: one of its classes stopped while it wrote on, as the Mooncake store's chunks
// are MEDIUM until it has seen a group's evictions, then SHORT) guesses per chunk: its parts
// are cut on measurement only, never from the start. So are the parts of a class the device
// has measured (some key of it, of any writer of several classes, has its death order known):
// a writer new to the device (one restarted without a stable identity) waits for its own
// orders there, and does not take a handle for a class the device has seen die. A vLLM file
// tier's reused blocks, LONG beside MEDIUM, die in another order than the rest while their
// mean lifetimes stay within 1.5x, and no other rule parts them; cut only once the orders
// were known, that part wrote mixed until then.
// Then, the same way, by writer: within each group (the class parts included), the keys of
// each such writer other than the group's main writer are cut off, one part per writer, under
// the same conditions, all or nothing on their own (a class split that fits is kept when the
// writer split does not), and given up the same way. Writers are what `writer` placement
// keeps apart; two engines that write one class each (or none) are otherwise one part until
// their lifetimes are measured, and what they wrote mixed by then stays mixed. The writer
// split leaves out writers of several classes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kvfdp::placement {

struct ClassKey {
	uint64_t writer = 0;
	uint8_t cls = 0;
	double share = 0;              // decayed share of the device's writes
	double life = 0;               // mean lifetime estimate, device bytes (0 unknown)
	double order = 1;              // death_order() of its deaths (mixing_cost.hpp)
	bool evidenced = false;        // its death order has settled (the learner decides when)
	bool order_known = false;      // its death order says something (the learner decides)
	bool given_up = false;         // its class part was given up: it stays with its group
	bool writer_given_up = false;  // its writer part was given up
	// Its writer part may be cut: the key is young (it started writing recently: the
	// learner decides), or its part was cut at the last recompute. A part made late would
	// move data written mixed for long; the lifetime and order rules make late splits.
	bool writer_may_cut = true;
	// The handle its writes go to now, and whether it writes: it wrote since the last
	// recompute, and an earlier recompute saw it (the learner decides). A writer part already
	// apart from its group's main writer (by any rule: the lifetime rule parts engines whose
	// lifetimes differ 2x, then merges them at 1.5x) stays apart while it writes and may be
	// cut at all: moved back, its new data mixes with what it wrote apart. One that stopped
	// writing (a fill) would hold a unit open for nothing; one that lives less than a regroup
	// (a restarted writer with no stable identity) has written nothing apart worth keeping.
	uint16_t handle = 0;
	bool writing = true;
	// Its class part was cut on measurement (a writer of several classes) at the last
	// recompute: it stays cut until it dies alike.
	bool class_cut = false;
	// First seen at this recompute: its share is that of the few writes since it began, and
	// says nothing yet (the learner decides).
	bool fresh = false;
	// It stopped writing once while another class of its writer wrote on (the learner
	// decides): its writer relabels its data, and its class parts are cut on measurement only.
	bool went_idle = false;
};

struct ClassSplitParams {
	size_t max_groups = 1;  // handles the learner may use
	size_t budget = 0;      // groups the split may leave in all (0: no split)
	double min_group_share = 0.02;
	double alike_order = 0.0625;
	double alike_ratio = 1.1;
	// A writer of several classes is parted by class on measurement only where the parts die
	// differently: death orders apart by this much, or lifetimes by this factor. Between this
	// and alike, a part stays as it is (hysteresis).
	double differ_order = 0.125;
	double differ_ratio = 1.5;
	// Writers whose write shares are within this relative difference are one writer part:
	// they write the same bytes at the same rate, as a tensor-parallel engine's ranks do.
	double same_share = 0.02;
};

struct ClassSplitResult {
	std::vector<std::vector<uint32_t>> groups;
	std::vector<uint32_t> given_up;         // keys whose class part was given up now
	std::vector<uint32_t> class_cut;        // keys in a class part cut on measurement now
	std::vector<uint32_t> writer_given_up;  // keys whose writer part was given up now
	std::vector<uint32_t> writer_cut;       // keys in a writer part cut off now
};

// groups: indexes into keys, as the learner grouped them (each key in one group).
[[nodiscard]] ClassSplitResult split_by_class(std::span<const ClassKey> keys,
					      std::vector<std::vector<uint32_t>> groups,
					      const ClassSplitParams &p);

}  // namespace kvfdp::placement
