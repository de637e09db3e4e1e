// placement: split_by_class: writers of one class are cut off by class, then by writer,
// writers of several classes by class until measured (only once measured where they relabel),
// a split that does not fit is not made at all (each
// stage on its own), a writer part is cut only while its keys may be, and a part that has
// its evidence and dies like its group's main part is given up; a class part of fresh keys
// only is cut whatever its share, and its writers with it.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "placement/class_split.hpp"
#include "placement/classes.hpp"

using namespace kvfdp::placement;

namespace {

ClassKey key(uint64_t writer, uint8_t cls, double share, double order = 1.0, bool evidenced = false,
	     bool writer_may_cut = false)
{
	ClassKey k;
	k.writer_may_cut = writer_may_cut;
	k.writer = writer;
	k.cls = cls;
	k.share = share;
	k.life = 1e9;
	k.order = order;
	k.evidenced = evidenced;
	k.order_known = evidenced;  // the learner: half died implies a quarter
	return k;
}

ClassSplitParams params()
{
	ClassSplitParams p;
	p.max_groups = 8;
	p.budget = 8;
	return p;
}

bool together(const ClassSplitResult &r, uint32_t a, uint32_t b)
{
	for (const auto &g : r.groups)
		if (std::count(g.begin(), g.end(), a) && std::count(g.begin(), g.end(), b))
			return true;
	return false;
}

}  // namespace

TEST_CASE("class split: writers of one class each are cut off by class; a writer of several "
	  "classes that relabels stays")
{
	// 0, 1: writers 1 and 2, both SHORT; 2: writer 3, MEDIUM; 3, 4: writer 4, SHORT and LONG,
	// whose SHORT went idle once while its LONG wrote on.
	std::vector<ClassKey> keys = {
		key(1, KVFDP_CLASS_SHORT, 0.3), key(2, KVFDP_CLASS_SHORT, 0.2),
		key(3, KVFDP_CLASS_MEDIUM, 0.2), key(4, KVFDP_CLASS_SHORT, 0.1),
		key(4, KVFDP_CLASS_LONG, 0.2)};
	keys[3].went_idle = true;
	ClassSplitResult r = split_by_class(keys, {{0, 1, 2, 3, 4}}, params());
	REQUIRE(r.groups.size() == 2);
	CHECK(together(r, 0, 1));   // the main class (SHORT) stays
	CHECK(!together(r, 0, 2));  // writer 3's MEDIUM is cut off
	CHECK(together(r, 0, 4));   // writer 4 relabels its chunks: its LONG stays
	CHECK(r.given_up.empty());
	// Had it never relabelled, its LONG is cut too, as hint places it.
	keys[3].went_idle = false;
	r = split_by_class(keys, {{0, 1, 2, 3, 4}}, params());
	CHECK(r.groups.size() == 3);
	CHECK(!together(r, 0, 4));
	CHECK(r.class_cut.empty());  // not on measured orders: no hysteresis keeps it
}

TEST_CASE("class split: a class whose keys are all fresh is cut whatever its share, and so are "
	  "its writers")
{
	// A fill (writer 9, no hint) and, first seen at this recompute, two writers of SHORT and
	// one of MEDIUM with a few writes each.
	std::vector<ClassKey> keys = {
		key(9, KVFDP_CLASS_NOT_SET, 0.8), key(1, KVFDP_CLASS_SHORT, 0.001),
		key(2, KVFDP_CLASS_SHORT, 0.002), key(3, KVFDP_CLASS_MEDIUM, 0.001)};
	ClassSplitResult r = split_by_class(keys, {{0, 1, 2, 3}}, params());
	CHECK(r.groups.size() == 1);  // not fresh: under min_group_share, no cut
	for (uint32_t i = 1; i < 4; i++)
		keys[i].fresh = true;
	r = split_by_class(keys, {{0, 1, 2, 3}}, params());
	REQUIRE(r.groups.size() == 4);  // SHORT and MEDIUM, and SHORT's two writers
	CHECK(!together(r, 0, 1));
	CHECK(!together(r, 0, 3));
	CHECK(!together(r, 1, 2));
	CHECK(!together(r, 1, 3));
	// A class part with an established key is judged by its share, and its fresh writers
	// wait for theirs (a restarted writer of a class the device knows).
	keys[2].fresh = false;
	r = split_by_class(keys, {{0, 1, 2, 3}}, params());
	CHECK(r.groups.size() == 2);
	CHECK(together(r, 0, 1));
	CHECK(together(r, 0, 2));
}

TEST_CASE("class split: a writer of several classes is parted by class until its orders are "
	  "known, then where they die differently; one that relabels only then")
{
	// One writer: LONG for reused blocks, MEDIUM for the rest.
	std::vector<ClassKey> keys = {key(1, KVFDP_CLASS_MEDIUM, 0.8, 0.45, false),
				      key(1, KVFDP_CLASS_LONG, 0.2, 0.6, false)};
	ClassSplitResult r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 2);  // nothing measured: apart from the start, as hint places it
	CHECK(r.class_cut.empty());
	keys[0].went_idle = true;  // a class of it stopped while another wrote: it relabels
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 1);  // labels guessed per chunk: no death order known, no cut
	keys[0].went_idle = false;
	keys[1].order_known = true;
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 1);  // LONG is measured now; the main class's order is not yet
	// Another writer's LONG, nothing measured of it, waits too: the device knows how LONG dies.
	keys.push_back(key(2, KVFDP_CLASS_MEDIUM, 0.5, 0.45, false));
	keys.push_back(key(2, KVFDP_CLASS_LONG, 0.1, 0.6, false));
	r = split_by_class(keys, {{0, 1}, {2, 3}}, params());
	CHECK(r.groups.size() == 2);
	CHECK(together(r, 2, 3));
	keys.resize(2);
	keys[0].order_known = true;
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 2);  // orders 0.6 against 0.45: they die differently
	CHECK(r.given_up.empty());
	// Alike before their evidence (orders known, not settled): cut, not given up.
	keys[1].order = 0.45;
	keys[1].class_cut = true;
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 2);
	CHECK(r.given_up.empty());
	keys[1].order = 0.6;
	keys[1].class_cut = false;
	keys[0].evidenced = keys[1].evidenced = true;
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 2);
	CHECK(r.given_up.empty());
	CHECK(r.writer_cut.empty());  // by class, not by writer
	CHECK(r.class_cut == std::vector<uint32_t>{1});
	// Between differing (orders 0.125 apart) and alike (0.0625): as it is, together unless
	// this stage cut it at the last recompute.
	keys[1].order = 0.55;
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 1);
	CHECK(r.given_up.empty());
	keys[1].class_cut = true;
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 2);
	// Measured alike: given up for good.
	keys[1].order = 0.5;
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 1);
	CHECK(r.given_up == std::vector<uint32_t>{1});
	// All or nothing within the budget, as the other stages.
	keys[1].order = 0.6;
	ClassSplitParams p = params();
	p.budget = 1;
	CHECK(split_by_class(keys, {{0, 1}}, p).groups.size() == 1);
}

TEST_CASE("class split: all or nothing within the budget and the handles; small parts stay")
{
	const std::vector<ClassKey> keys = {key(1, KVFDP_CLASS_SHORT, 0.5),
					    key(2, KVFDP_CLASS_MEDIUM, 0.3),
					    key(3, KVFDP_CLASS_LONG, 0.2)};
	ClassSplitParams p = params();
	p.budget = 2;  // three groups would be needed
	ClassSplitResult r = split_by_class(keys, {{0, 1, 2}}, p);
	CHECK(r.groups.size() == 1);
	p = params();
	p.max_groups = 2;
	r = split_by_class(keys, {{0, 1, 2}}, p);
	CHECK(r.groups.size() == 1);
	p = params();
	r = split_by_class(keys, {{0, 1, 2}}, p);
	CHECK(r.groups.size() == 3);
	p.min_group_share = 0.25;  // LONG takes 0.2 of the writes: it stays
	r = split_by_class(keys, {{0, 1, 2}}, p);
	REQUIRE(r.groups.size() == 2);
	CHECK(together(r, 0, 2));
}

TEST_CASE("class split: a part is given up once both sides have their evidence and die alike")
{
	ClassSplitParams p = params();
	// Orders 1.0 against 0.95: alike (alike_order 0.0625). Without evidence: cut off.
	std::vector<ClassKey> keys = {key(1, KVFDP_CLASS_SHORT, 0.6, 1.0, true),
				      key(2, KVFDP_CLASS_MEDIUM, 0.4, 0.95, false)};
	ClassSplitResult r = split_by_class(keys, {{0, 1}}, p);
	CHECK(r.groups.size() == 2);
	CHECK(r.given_up.empty());
	keys[1].evidenced = true;
	r = split_by_class(keys, {{0, 1}}, p);
	CHECK(r.groups.size() == 1);
	CHECK(r.given_up == std::vector<uint32_t>{1});
	// Given up, it stays with its group from then on, whatever its order.
	keys[1].given_up = true;
	keys[1].order = 0.5;
	r = split_by_class(keys, {{0, 1}}, p);
	CHECK(r.groups.size() == 1);
	// Orders apart by more than alike_order, or lifetimes by more than alike_ratio: kept.
	keys[1].given_up = false;
	r = split_by_class(keys, {{0, 1}}, p);
	CHECK(r.groups.size() == 2);
	keys[1].order = 1.0;
	keys[1].life = 2e9;
	r = split_by_class(keys, {{0, 1}}, p);
	CHECK(r.groups.size() == 2);
	CHECK(r.given_up.empty());
}

TEST_CASE("class split, by writer: writers of one class each start apart; a writer of several "
	  "classes stays")
{
	// 0, 1: two engines, neither hints; 2: a log writer, neither; 3, 4: writer 4, SHORT and
	// LONG per chunk, which relabels (its SHORT went idle while its LONG wrote).
	std::vector<ClassKey> keys = {key(1, KVFDP_CLASS_NOT_SET, 0.35, 1.0, false, true),
				      key(2, KVFDP_CLASS_NOT_SET, 0.25, 1.0, false, true),
				      key(3, KVFDP_CLASS_NOT_SET, 0.1, 1.0, false, true),
				      key(4, KVFDP_CLASS_SHORT, 0.05, 1.0, false, true),
				      key(4, KVFDP_CLASS_LONG, 0.15, 1.0, false, true)};
	keys[3].went_idle = true;
	ClassSplitResult r = split_by_class(keys, {{0, 1, 2, 3, 4}}, params());
	REQUIRE(r.groups.size() == 3);
	CHECK(!together(r, 0, 1));
	CHECK(!together(r, 0, 2));
	CHECK(!together(r, 1, 2));
	CHECK(together(r, 3, 4));
	CHECK(std::count(r.writer_cut.begin(), r.writer_cut.end(), 2u) == 1);
	// A key that may no longer be cut (it is not young, and was not cut last time) stays.
	keys[2].writer_may_cut = false;
	r = split_by_class(keys, {{0, 1, 2, 3, 4}}, params());
	REQUIRE(r.groups.size() == 2);
	CHECK(together(r, 0, 2) != together(r, 1, 2));
	// ... unless it is apart already, whatever rule put it there: engines whose lifetimes
	// differ 2x are parted by the lifetime rule, which merges them again at 1.5x.
	keys[2].handle = 3;
	r = split_by_class(keys, {{0, 1, 2, 3, 4}}, params());
	REQUIRE(r.groups.size() == 3);
	CHECK(!together(r, 0, 2));
	CHECK(!together(r, 1, 2));
	// One that stopped writing (a fill) does not hold a unit open for nothing.
	keys[2].writing = false;
	r = split_by_class(keys, {{0, 1, 2, 3, 4}}, params());
	CHECK(r.groups.size() == 2);
	keys[2].writing = true;
	// Apart from the main writer means on another handle than most of the main's writes.
	keys[0].handle = 3;
	r = split_by_class(keys, {{0, 1, 2, 3, 4}}, params());
	REQUIRE(r.groups.size() == 2);
	CHECK(together(r, 0, 2));
}

TEST_CASE("class split, by writer: all or nothing on its own; the class split stays when it "
	  "does not fit")
{
	// Three writers of SHORT, one of LONG: by class two groups, by writer four.
	const std::vector<ClassKey> keys = {key(1, KVFDP_CLASS_SHORT, 0.35, 1.0, false, true),
					    key(2, KVFDP_CLASS_SHORT, 0.25, 1.0, false, true),
					    key(3, KVFDP_CLASS_SHORT, 0.15, 1.0, false, true),
					    key(4, KVFDP_CLASS_LONG, 0.25, 1.0, false, true)};
	ClassSplitParams p = params();
	p.budget = 3;
	ClassSplitResult r = split_by_class(keys, {{0, 1, 2, 3}}, p);
	REQUIRE(r.groups.size() == 2);
	CHECK(together(r, 0, 1));
	CHECK(together(r, 0, 2));
	CHECK(!together(r, 0, 3));
	CHECK(r.writer_cut.empty());
	p.budget = 4;
	r = split_by_class(keys, {{0, 1, 2, 3}}, p);
	CHECK(r.groups.size() == 4);
}

TEST_CASE("class split, by writer: a writer part is given up once both have their evidence and "
	  "die alike")
{
	std::vector<ClassKey> keys = {key(1, KVFDP_CLASS_NOT_SET, 0.6, 1.0, true, true),
				      key(2, KVFDP_CLASS_NOT_SET, 0.4, 0.95, false, true)};
	ClassSplitResult r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 2);
	keys[1].evidenced = true;
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 1);
	CHECK(r.writer_given_up == std::vector<uint32_t>{1});
	CHECK(r.given_up.empty());
	keys[1].writer_given_up = true;
	keys[1].order = 0.5;
	r = split_by_class(keys, {{0, 1}}, params());
	CHECK(r.groups.size() == 1);
}

TEST_CASE("class split, by writer: writers of the same write share (a tensor-parallel engine's "
	  "ranks) are one part")
{
	// Two ranks in step beside a log writer; then a third writer of the ranks' share.
	std::vector<ClassKey> keys = {key(1, KVFDP_CLASS_NOT_SET, 0.45, 1.0, false, true),
				      key(2, KVFDP_CLASS_NOT_SET, 0.449, 1.0, false, true),
				      key(3, KVFDP_CLASS_NOT_SET, 0.101, 1.0, false, true)};
	ClassSplitResult r = split_by_class(keys, {{0, 1, 2}}, params());
	REQUIRE(r.groups.size() == 2);
	CHECK(together(r, 0, 1));
	CHECK(!together(r, 0, 2));
	// Two writers of one share that is not the main's are cut off together.
	keys = {key(1, KVFDP_CLASS_NOT_SET, 0.5, 1.0, false, true),
		key(2, KVFDP_CLASS_NOT_SET, 0.25, 1.0, false, true),
		key(3, KVFDP_CLASS_NOT_SET, 0.25, 1.0, false, true)};
	r = split_by_class(keys, {{0, 1, 2}}, params());
	REQUIRE(r.groups.size() == 2);
	CHECK(together(r, 1, 2));
	CHECK(!together(r, 0, 1));
	// Off (0): each writer is its own part.
	ClassSplitParams p = params();
	p.same_share = 0;
	r = split_by_class(keys, {{0, 1, 2}}, p);
	CHECK(r.groups.size() == 3);
}
