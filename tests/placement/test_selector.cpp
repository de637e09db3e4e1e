// placement: the choice selector (selector.hpp): nothing moves while the shadow copies warm
// up, a copy lower by the margin takes over, one within the margin does not, and a failed
// copy is left.
#include <doctest/doctest.h>

#include <string>

#include "placement/selector.hpp"

using namespace kvfdp::placement;

namespace {

constexpr uint64_t kGiB = 1ull << 30;

// Reports every choice at host bytes h with the given WAFs.
void report(ChoiceSelector &s, uint64_t h, double learned, double classes, double writers)
{
	s.report(Choice::learned, h, static_cast<uint64_t>(h * learned));
	s.report(Choice::classes, h, static_cast<uint64_t>(h * classes));
	s.report(Choice::writers, h, static_cast<uint64_t>(h * writers));
}

}  // namespace

TEST_CASE("selector: warm-up, the margin, and failed copies")
{
	SelectorConfig c;
	c.window_bytes = kGiB;
	c.warmup_bytes = 2 * kGiB;
	c.margin = 0.05;
	ChoiceSelector s(c);
	report(s, kGiB, 1.5, 1.1, 1.2);
	CHECK(s.waf(Choice::classes) == 0);  // still warming up
	CHECK(s.pick() == Choice::learned);
	report(s, 3 * kGiB, 1.5, 1.48, 1.2);
	CHECK(s.waf(Choice::writers) > 1.0);
	CHECK(s.pick() == Choice::writers);
	CHECK(s.switches() == 1);
	// Within the margin of the current copy: stay.
	for (uint64_t h = 4; h < 40; h++)
		report(s, h * kGiB, 1.3, 1.17, 1.2);
	CHECK(s.waf(Choice::classes) < s.waf(Choice::writers));
	CHECK(s.pick() == Choice::writers);
	// A copy that refused a write is never chosen; the current one failing moves away.
	s.report(Choice::writers, 41 * kGiB, 41 * kGiB, true);
	CHECK(s.waf(Choice::writers) == 0);
	CHECK(s.pick() == Choice::classes);
	CHECK(s.switches() == 2);
}

TEST_CASE("selector: the learner applies a fixed policy's grouping when told")
{
	LearnerConfig lc;
	lc.nruh = 8;
	lc.capacity_bytes = kGiB;
	lc.ru_bytes = 16 << 20;
	Learner l(lc);
	const Key a{1, KVFDP_CLASS_SHORT}, b{1, KVFDP_CLASS_LONG}, c{2, KVFDP_CLASS_SHORT};
	for (int i = 0; i < 4; i++)  // under one reclaim unit: nothing is split yet
		for (Key k : {a, b, c})
			(void)l.place(k, 1 << 20);
	(void)l.recompute(1.0);
	CHECK(l.handle_of(a) == l.handle_of(b));  // as none: nothing measured yet
	l.set_choice(Choice::classes);
	CHECK(l.choice() == Choice::classes);
	(void)l.recompute(2.0);
	CHECK(l.handle_of(a) != l.handle_of(b));
	CHECK(l.handle_of(a) == l.handle_of(c));
	l.set_choice(Choice::writers);
	(void)l.recompute(3.0);
	CHECK(l.handle_of(a) == l.handle_of(b));
	CHECK(l.handle_of(a) != l.handle_of(c));
	CHECK(std::string(choice_name(Choice::writers)) == "writers");
}
