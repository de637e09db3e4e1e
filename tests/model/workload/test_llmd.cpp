// Unit tests of --workload llmd (model/workload/llmd.hpp): llm-d's evictor starts deleting at
// the high mark and stops at the low one, skips files read recently, and deletes in hash,
// LRU or FIFO order; vLLM's prefix lookups count hits and misses (a block read after its
// file was deleted is a miss); marks and windows that do not fit are one line naming them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/workload/llmd.hpp"
#include "model/workload/null_sink.hpp"

using namespace kvfdp;
using namespace kvfdp::workload;

namespace {

// Runs the evictor at now and returns the keys it deleted, in order.
std::vector<uint64_t> run(LlmdEvictor &e, uint64_t now)
{
	std::vector<uint64_t> out;
	e.run(now, [&](uint64_t k) { out.push_back(k); });
	return out;
}

// A request for the full blocks ids (512 tokens each).
MooncakeRequest request(std::vector<uint64_t> ids)
{
	MooncakeRequest r;
	r.input_length = ids.size() * kMooncakeBlockTokens;
	r.hash_ids = std::move(ids);
	return r;
}

}  // namespace

TEST_CASE("llmd: deletion starts at the high mark, stops at the low one, in hash order")
{
	// 100 blocks, marks 50/30%, nothing recent.
	LlmdEvictor e(LlmdOrder::hash, {0.50, 0.30}, 100, 0);
	// Keys written in descending order: hash order is the reverse of write order.
	for (uint64_t k = 49; k >= 1; k--) {
		e.stored(k * 10, 1, 0);
		CHECK(run(e, 0).empty());  // 49 blocks: below the high mark
	}
	e.stored(5, 1, 0);  // 50 blocks: the high mark
	const auto first = run(e, 0);
	REQUIRE(first.size() == 20);  // down to the low mark, 30 blocks
	CHECK(e.used_blocks() == 30);
	CHECK_FALSE(e.deleting());
	CHECK(first.front() == 5);
	for (size_t i = 1; i < first.size(); i++)
		CHECK(first[i] == i * 10);  // ascending keys
	// Below the high mark nothing more goes, whatever the low mark says.
	e.stored(1000, 19, 0);
	CHECK(e.used_blocks() == 49);
	CHECK(run(e, 0).empty());
	// The next pass goes on from where the scan stopped (key 200), then wraps to the start.
	e.stored(1, 1, 0);
	const auto second = run(e, 0);
	REQUIRE_FALSE(second.empty());
	CHECK(second.front() == 200);
	CHECK(e.used_blocks() <= 30);
}

TEST_CASE("llmd: files read within the recent window are skipped, then deleted once they age")
{
	// Recent: 100 bytes of the write clock.
	LlmdEvictor e(LlmdOrder::hash, {0.50, 0.30}, 10, 100);
	for (uint64_t k = 1; k <= 4; k++)
		e.stored(k, 1, 0);
	e.read(1, 150);
	e.read(2, 150);
	e.stored(5, 1, 160);  // 5 blocks: the high mark; 3 is the low mark's floor
	// At 160, 1, 2 (read at 150) and 5 (written at 160) are recent: 3 and 4 go.
	CHECK(run(e, 160) == std::vector<uint64_t>{3, 4});
	CHECK(e.used_blocks() == 3);
	CHECK(e.skipped_recent() >= 2);
	// Nothing old enough: deletion waits (a stall), and goes on once 1 and 2 age out.
	e.stored(6, 1, 170);
	e.stored(7, 1, 170);
	CHECK(run(e, 170).empty());
	CHECK(e.deleting());
	CHECK(e.stalls() == 1);
	CHECK(run(e, 200).empty());  // still before 150 + 100: no rescan
	CHECK(e.stalls() == 1);
	CHECK(run(e, 250) == std::vector<uint64_t>{1, 2});
	CHECK_FALSE(e.deleting());
}

TEST_CASE("llmd: lru deletes the least recently read first; fifo the oldest written")
{
	for (LlmdOrder order : {LlmdOrder::lru, LlmdOrder::fifo}) {
		CAPTURE(static_cast<int>(order));
		LlmdEvictor e(order, {0.40, 0.20}, 10, 10);
		e.stored(30, 1, 0);
		e.stored(10, 1, 1);
		e.stored(20, 1, 2);
		e.read(30, 3);  // the oldest written is the most recently read
		e.stored(40, 1, 100);
		const auto gone = run(e, 100);
		if (order == LlmdOrder::lru)
			CHECK(gone == std::vector<uint64_t>{10, 20});
		else
			CHECK(gone == std::vector<uint64_t>{30, 10});
	}
	// lru: the least recent file is still recent: nothing goes.
	LlmdEvictor e(LlmdOrder::lru, {0.40, 0.20}, 10, 1000);
	for (uint64_t k = 1; k <= 4; k++)
		e.stored(k, 1, k);
	CHECK(run(e, 10).empty());
	CHECK(e.stalls() == 1);
}

TEST_CASE("llmd: hits are the stored prefix; a block read after its deletion is a miss")
{
	// 16 blocks of 4 KiB, one block per file, marks 50/25%, nothing recent.
	LlmdConfig cfg;
	cfg.block_bytes = 4096;
	cfg.marks = {0.50, 0.25};
	cfg.recent = 0;
	MooncakeRequest partial = request({1, 2, 3});
	partial.input_length -= 1;  // the last block is partial: vLLM does not store it
	std::vector<MooncakeRequest> trace = {
		request({1, 2, 3, 4}), request({1, 2, 5}),  // hits 1, 2
		request({6, 2}),  // 2 is stored but after a miss: recomputed, not rewritten
		partial,          // hits 1, 2; 3 is not looked up
	};
	LlmdWorkload w("t", trace, cfg);
	NullSink sink;
	REQUIRE(w.run(sim::Placement::none, 16, 4096, sink, nullptr));
	const LlmdStats &s = w.stats();
	CHECK(s.lookups == 4 + 3 + 2 + 2);
	CHECK(s.hits == 2 + 2);
	CHECK(s.misses == 4 + 1 + 2);
	CHECK(s.stores == 6);
	CHECK(s.deletions == 0);
	CHECK(s.evicted_misses == 0);
	CHECK(w.extra()["hit_ratio"].get<double>() == doctest::Approx(4.0 / 11));

	// Eight distinct blocks fill the high mark (8 of 16): deletion takes four; asking for
	// the eight again, every block found missing was stored before: an evicted miss,
	// stored again.
	std::vector<MooncakeRequest> twice = {request({1, 2, 3, 4, 5, 6, 7, 8}),
					      request({1, 2, 3, 4, 5, 6, 7, 8})};
	LlmdWorkload w2("t", twice, cfg);
	REQUIRE(w2.run(sim::Placement::none, 16, 4096, sink, nullptr));
	const LlmdStats &s2 = w2.stats();
	CHECK(s2.lookups == 16);
	CHECK(s2.hits + s2.misses == 16);
	CHECK(s2.deletions >= 4);
	CHECK(s2.evicted_misses >= 1);
	CHECK(s2.evicted_misses <= s2.misses - 8);
	CHECK(s2.stores == 8 + s2.evicted_misses);
	CHECK(s2.store_failures == 0);
}

TEST_CASE("llmd: marks and windows that do not fit are one line naming the parameter")
{
	for (const char *bad : {"70,85", "85,85", "110,70", "85,0", "85", "high,low", "85;70"}) {
		CAPTURE(bad);
		auto m = parse_llmd_marks(bad);
		REQUIRE_FALSE(m);
		const std::string msg = m.error().message();
		CHECK(msg.rfind("--evict-marks: ", 0) == 0);
		CHECK(msg.find('\n') == std::string::npos);
	}
	auto m = parse_llmd_marks("95,89");
	REQUIRE(m);
	CHECK(m->high == doctest::Approx(0.95));
	CHECK(m->low == doctest::Approx(0.89));

	LlmdConfig cfg;
	cfg.block_bytes = 1 << 20;
	cfg.recent = 0.7;  // the low mark is 0.7
	auto r = LlmdWorkload::validate(cfg, 1ull << 30);
	REQUIRE_FALSE(r);
	CHECK(r.error().message().rfind("--evict-recent: ", 0) == 0);
	cfg.recent = -0.1;
	r = LlmdWorkload::validate(cfg, 1ull << 30);
	REQUIRE_FALSE(r);
	CHECK(r.error().message().rfind("--evict-recent: want", 0) == 0);
	cfg.recent = 0.05;
	CHECK(LlmdWorkload::validate(cfg, 1ull << 30));
	// 85% of 2 MiB does not hold two 1 MiB files.
	r = LlmdWorkload::validate(cfg, 2ull << 20);
	REQUIRE_FALSE(r);
	CHECK(r.error().message().rfind("--evict-marks: the high mark", 0) == 0);
	CHECK(r.error().message().find('\n') == std::string::npos);
}
