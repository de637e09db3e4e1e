// LearnedPlacement's chunk table reports what died exactly as a chunk-by-chunk walk does: one
// learner.died() per chunk with that chunk's key, overlapped bytes and age. chunks_died()
// folds runs of chunks from one earlier write into one call; this checks the fold against
// that reference on a mix of unaligned writes and discards (partial first and last chunks,
// empty chunks inside a run, runs of several writes).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "tests/kvfdpd/bench_learned.hpp"
#include "kvfdpd/daemon/writers.hpp"

using namespace kvfdp;

namespace {

// The reference: a chunk-by-chunk walk over its own table, feeding its own learner.
struct Reference {
	struct Chunk {
		bool valid = false;
		placement::Key key;
		uint64_t clock = 0;
	};
	Reference(const placement::LearnerConfig &c, uint32_t lbas_per_chunk, uint32_t lba_size,
		  uint64_t nlb)
	    : learner(c), per(lbas_per_chunk), lba(lba_size), chunks((nlb + per - 1) / per)
	{
	}
	void died(uint64_t slba, uint32_t nlb, const placement::Key *k)
	{
		const uint64_t now = learner.clock();
		const uint64_t end = std::min<uint64_t>(slba + nlb, chunks.size() * per);
		for (uint64_t l = slba; l < end;) {
			const uint64_t c = l / per;
			const uint64_t next = std::min<uint64_t>((c + 1) * per, end);
			Chunk &ch = chunks[c];
			if (ch.valid)
				learner.died(ch.key, (next - l) * lba, now - ch.clock);
			ch.valid = k != nullptr;
			ch.key = k ? *k : placement::Key{};
			ch.clock = k ? now : 0;
			l = next;
		}
	}
	placement::Learner learner;
	uint32_t per, lba;
	std::vector<Chunk> chunks;
};

}  // namespace

TEST_CASE("learned placement: deaths folded per run equal the chunk-by-chunk walk")
{
	test::RigConfig rc;
	rc.lba_size = 512;  // 8 LBAs per 4 KiB chunk: requests start and end inside chunks
	rc.nlb = 1 << 16;   // 32 MiB, 8192 chunks
	rc.nruh = 4;
	test::RigLearned lp(rc);
	placement::LearnerConfig lc;
	lc.nruh = rc.nruh;
	lc.capacity_bytes = rc.nlb * rc.lba_size;
	lc.ru_bytes = lp.dev.info().ru_size;
	Reference ref(lc, 8, rc.lba_size, rc.nlb);

	std::mt19937_64 rng(14);
	for (int i = 0; i < 20000; i++) {
		const uint32_t nlb = static_cast<uint32_t>(1 + rng() % 600);
		const uint64_t slba = rng() % (rc.nlb - 300);  // some run past the end and are cut
		if (rng() % 5 == 0) {
			lp.lp->discard(slba, nlb);
			ref.died(slba, nlb, nullptr);
			continue;
		}
		const placement::Key k{1 + rng() % 3, static_cast<uint8_t>(rng() % 4)};
		(void)lp.lp->place(static_cast<uint32_t>(k.writer), k.cls, slba, nlb);
		(void)ref.learner.place(k, uint64_t{nlb} * rc.lba_size);
		ref.died(slba, nlb, &k);
		if (i % 5000 == 4999) {
			(void)lp.lp->recompute_now();
			(void)ref.learner.recompute(0);
		}
	}
	(void)lp.lp->recompute_now();
	(void)ref.learner.recompute(0);

	daemon::WriterNames names;
	const nlohmann::json got = lp.lp->policy_json(names)["keys"];
	const std::vector<placement::KeyInfo> want = ref.learner.groups();
	REQUIRE(got.size() == want.size());
	REQUIRE(want.size() == 12);
	for (const placement::KeyInfo &w : want) {
		CAPTURE(w.key.writer);
		CAPTURE(w.key.cls);
		bool found = false;
		for (const nlohmann::json &g : got) {
			if (g["writer_id"].get<uint64_t>() != w.key.writer ||
			    g["class"] != placement::class_name(w.key.cls))
				continue;
			found = true;
			CHECK(w.died_bytes > 0);
			CHECK(g["died_bytes"].get<uint64_t>() == w.died_bytes);
			CHECK(g["written_bytes"].get<uint64_t>() == w.written_bytes);
			CHECK(g["live_bytes"].get<uint64_t>() == w.live_bytes);
			CHECK(g["lifetime_bytes"].get<double>() ==
			      doctest::Approx(w.lifetime_bytes).epsilon(1e-9));
			CHECK(g["handle"].get<uint16_t>() == w.handle);
		}
		CHECK(found);
	}
}
