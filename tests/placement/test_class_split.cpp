// placement: split_by_class: writers of one class are cut off by class, writers of several
// are not, a split that does not fit is not made at all, and a part that has its evidence
// and dies like its group's main class is given up.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "placement/class_split.hpp"
#include "placement/classes.hpp"

using namespace kvfdp::placement;

namespace {

ClassKey key(uint64_t writer, uint8_t cls, double share, double order = 1.0, bool evidenced = false)
{
	ClassKey k;
	k.writer = writer;
	k.cls = cls;
	k.share = share;
	k.life = 1e9;
	k.order = order;
	k.evidenced = evidenced;
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
	  "classes stays")
{
	// 0, 1: writers 1 and 2, both SHORT; 2: writer 3, MEDIUM; 3, 4: writer 4, SHORT and LONG.
	const std::vector<ClassKey> keys = {
		key(1, KVFDP_CLASS_SHORT, 0.3), key(2, KVFDP_CLASS_SHORT, 0.2),
		key(3, KVFDP_CLASS_MEDIUM, 0.2), key(4, KVFDP_CLASS_SHORT, 0.1),
		key(4, KVFDP_CLASS_LONG, 0.2)};
	const ClassSplitResult r = split_by_class(keys, {{0, 1, 2, 3, 4}}, params());
	REQUIRE(r.groups.size() == 2);
	CHECK(together(r, 0, 1));   // the main class (SHORT) stays
	CHECK(!together(r, 0, 2));  // writer 3's MEDIUM is cut off
	CHECK(together(r, 0, 4));   // writer 4 labels chunks itself: its LONG stays
	CHECK(r.given_up.empty());
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
	// Orders 1.0 against 0.95: alike (order_close 0.125). Without evidence: cut off.
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
	// Orders apart by more than order_close, or lifetimes by more than merge_ratio: kept.
	keys[1].given_up = false;
	r = split_by_class(keys, {{0, 1}}, p);
	CHECK(r.groups.size() == 2);
	keys[1].order = 1.0;
	keys[1].life = 2e9;
	r = split_by_class(keys, {{0, 1}}, p);
	CHECK(r.groups.size() == 2);
	CHECK(r.given_up.empty());
}
