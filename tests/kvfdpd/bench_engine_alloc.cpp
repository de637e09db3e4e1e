// kvfdpd's per-request path allocates nothing in steady state: every op through IoEngine and
// the queue loop's dispatch/commit on the loopback rig (bench_rig.hpp), counted by the
// program's own malloc (bench_alloc_hook.cpp). Also with --placement learned, where every
// write and discard also goes through the learner and its chunk table of deaths.
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>

#include "tests/kvfdpd/bench_learned.hpp"
#include "tests/kvfdpd/bench_rig.hpp"
#include "kvfdpd/daemon/writers.hpp"
#include "model/twin/twin.hpp"

using namespace kvfdp;

namespace {

// A mix of everything a queue sees: tagged 128 KiB writes of each class, untagged and
// split 1 MiB-class writes, reads, flushes, discards and write zeroes.
test::RigRequest mixed(uint64_t i)
{
	test::RigRequest r;
	const uint64_t k = i % 8;
	// 999 slots of 512 KiB: not a multiple of 8, so each slot takes every op in turn (a
	// discard or write zeroes finds data there, for learned placement's death path).
	r.sector = (i % 999) * 1024;
	r.sectors = 256;  // 128 KiB
	r.writer = static_cast<uint32_t>(
		1 + (i / 8) % 3);  // keys of learned placement; the class map ignores it
	switch (k) {
	case 0:
	case 1:
	case 2:
		r.op = ublk::kOpWrite;
		r.cls = static_cast<uint8_t>(KVFDP_CLASS_SHORT + (i / 8) % 4);
		break;
	case 3:
		r.op = ublk::kOpWrite;  // untagged: stale, default handle
		r.sectors = 1024;       // 512 KiB: split at the 128 KiB transfer limit
		break;
	case 4: r.op = ublk::kOpRead; break;
	case 5:
		r.op = ublk::kOpFlush;
		r.sector = 0;
		r.sectors = 0;
		break;
	case 6: r.op = ublk::kOpDiscard; break;
	default: r.op = ublk::kOpWriteZeroes; break;
	}
	return r;
}

}  // namespace

namespace {

// members > 1: a stripe of that many passthru queues with 64 KiB units (each 128 KiB request,
// at a multiple of 512 KiB, covers two units on two members). learned: --placement learned;
// the 999 request slots are written, overwritten, discarded and zeroed again and again, so
// the learner's death path runs for every write after the first pass.
void check_no_allocation(bool zero_copy, uint32_t members = 1, bool learned = false,
			 bool with_twin = false)
{
	CAPTURE(zero_copy);
	CAPTURE(members);
	CAPTURE(learned);
	test::RigConfig rc;
	rc.max_transfer = 128 * 1024;
	rc.zero_copy = zero_copy;
	rc.members = members;
	std::unique_ptr<test::RigLearned> lp;
	if (learned) {
		lp = std::make_unique<test::RigLearned>(rc);
		rc.learned = lp->lp.get();
	}
	std::unique_ptr<twin::Twin>
		tw;  // the live WAF twin, its thread draining the ring meanwhile
	if (with_twin) {
		auto t = twin::Twin::create(twin::TwinOptions{
			twin::TwinGeometry{rc.nlb, rc.lba_size, 1 << 20, rc.nruh, 0.07}});
		REQUIRE(t);
		tw = std::move(*t);
		tw->add_rings(1);
		rc.twin = &tw->ring(0);
		tw->start();
	}
	test::BenchRig<decltype(&mixed)> rig(rc, &mixed);
	REQUIRE(rig.serve(4 * rc.depth));  // warm-up
	if (lp)
		(void)lp->lp->recompute_now();  // off the data path (the regroup thread)
	const uint64_t a0 = test::allocation_count();
	const bool ok = rig.serve(4000);
	const uint64_t allocs = test::allocation_count() - a0;
	REQUIRE(ok);
	CHECK(allocs == 0);
	if (tw) {  // every write, discard and write zeroes reached the twin or was counted dropped
		tw->stop();
		const twin::TwinReport rep = tw->report();
		CHECK(rep.records + rep.dropped == (4 * rc.depth + 4000) / 8 * 6);
	}
	CHECK(rig.bad_results() == 0);
	CHECK(rig.lost() == 0);
	CHECK(rig.inflight() == 0);
	const daemon::QueueCounters &c = rig.counters();
	const uint64_t total = 4 * rc.depth + 4000;  // both multiples of 8
	CHECK(c.writes.get() == total / 8 * 4);
	CHECK(c.reads.get() == total / 8);
	CHECK(c.flushes.get() == total / 8);
	CHECK(c.discards.get() == total / 8);
	CHECK(c.write_zeroes.get() == total / 8);
	CHECK(c.stale_tags.get() == total / 8);
	CHECK(c.errors.get() == 0);
	// 3 tagged writes (1 command), 1 split write (4), 1 each for the other four ops. On a
	// stripe: 2 per 128 KiB request (one per unit), 8 for the split write, the flush on every
	// member.
	if (members == 1)
		CHECK(rig.device_cmds() == total / 8 * (3 + 4 + 4));
	else
		CHECK(rig.device_cmds() == total / 8 * (3 * 2 + 8 + 2 + members + 2 + 2));
	if (lp) {
		// Every write went to a handle the learner gave; the deaths reached it: each of the
		// 12 keys (3 writers x 4 classes) and the untagged one saw its data overwritten,
		// discarded or zeroed.
		uint64_t placed = 0;
		for (unsigned h = 0; h < rc.nruh; h++)
			placed += c.handle_writes[h].get();
		CHECK(placed == c.writes.get());
		(void)lp->lp->recompute_now();
		daemon::WriterNames names;
		const nlohmann::json p = lp->lp->policy_json(names);
		INFO(p.dump());
		CHECK(p["keys"].size() == 3 * 4 + 1);
		for (const nlohmann::json &k : p["keys"])
			CHECK(k["died_bytes"].get<uint64_t>() > 0);
	} else {
		// The tagged classes reached their default handles (SHORT..EXTREME -> 1..4).
		for (unsigned h = 1; h <= 4; h++)
			CHECK(c.handle_writes[h].get() == total / 8 * 3 / 4);
	}
	// Copy mode: the driver copied every read/write through kvfdpd's buffers; zero copy: none.
	const uint64_t data_bytes = c.read_bytes.get() + c.write_bytes.get();
	CHECK(data_bytes == total / 8 * (3 * 128 + 512 + 128) * 1024);
	CHECK(c.copied_bytes.get() == (rc.zero_copy ? 0 : data_bytes));
}

}  // namespace

TEST_CASE("engine: no heap allocation per request in steady state, every op (copy mode)")
{
	check_no_allocation(false);
}

TEST_CASE("engine: no heap allocation per request in steady state, every op (zero copy)")
{
	check_no_allocation(true);
}

TEST_CASE(
	"engine: no heap allocation per request on a 4-member stripe, every op (copy and zero copy)")
{
	check_no_allocation(false, 4);
	check_no_allocation(true, 4);
}

TEST_CASE(
	"engine: no heap allocation per request with learned placement, every op (copy and zero copy)")
{
	check_no_allocation(false, 1, true);
	check_no_allocation(true, 1, true);
}

TEST_CASE(
	"engine: no heap allocation per request with the live WAF twin, every op (copy and zero copy)")
{
	check_no_allocation(false, 1, false, true);
	check_no_allocation(true, 1, false, true);
}

TEST_CASE("engine rig: the counting malloc sees an allocation")
{
	// Guards the test above against a hook that never counts: one malloc (through a
	// volatile pointer, so it cannot be elided) and one ::operator new call.
	void *(*volatile alloc)(size_t) = &std::malloc;
	const uint64_t a0 = test::allocation_count();
	void *p = alloc(64);
	void *q = ::operator new(64);
	const uint64_t a1 = test::allocation_count();
	std::free(p);
	::operator delete(q);
	CHECK(a1 - a0 == 2);
}
