// End to end: the KV workloads through `kvfdp simulate`'s run_one on a small FDP SSD model.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "nvme/model/config.hpp"
#include "tools/sim/simulate.hpp"
#include "tools/workload/chunk_store.hpp"
#include "tools/workload/kv_synth.hpp"

using namespace kvfdp;
using namespace kvfdp::workload;

namespace {

// 512 MiB logical, 7% OP, 1 MiB RUs, 8 handles: small enough for a unit test, with GC.
model::ModelConfig small_model()
{
	model::ModelConfig cfg;
	cfg.logical_bytes = 512ull << 20;
	cfg.op = 0.07;
	cfg.ru_size = 1ull << 20;
	cfg.nruh = 8;
	return cfg;
}

double waf(const model::ModelConfig &cfg, sim::Workload &w, sim::Placement p)
{
	auto r = sim::run_one(cfg, w, p, nullptr);
	REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
	CHECK(r->host_bytes > 0);
	CHECK(r->waf >= 1.0);
	return r->waf;
}

} // namespace

TEST_CASE("workload: oracle <= hint <= none WAF for the synthetic KV mix")
{
	const auto cfg = small_model();
	KvSynthConfig kc;
	kc.chunk_bytes = 64 * 1024; // 16 chunks per RU
	kc.utilisation = 1.0;
	kc.drive_writes = 3.0;
	KvSynthWorkload w(kc);
	const double none = waf(cfg, w, sim::Placement::none);
	const double hint = waf(cfg, w, sim::Placement::hint);
	const double oracle = waf(cfg, w, sim::Placement::oracle);
	MESSAGE("synthetic KV WAF: none " << none << ", hint " << hint << ", oracle " << oracle);
	CHECK(none > 1.05); // GC matters on this model
	CHECK(hint <= none);
	CHECK(oracle <= hint);
}

TEST_CASE("workload: the chunk store runs on the model, and oracle placement beats none")
{
	// Conversations: each request resends its conversation's blocks and adds two more, so
	// blocks are reused for a while and then die.
	std::vector<MooncakeRequest> trace;
	uint64_t next = 1;
	std::vector<std::vector<uint64_t>> convs(40);
	uint64_t x = 7;
	for (int r = 0; r < 6000; ++r) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		auto &c = convs[(x >> 33) % convs.size()];
		if (c.size() > 24 || ((x >> 20) % 8) == 0)
			c.clear();
		c.push_back(next++);
		c.push_back(next++);
		MooncakeRequest q;
		q.timestamp_ms = static_cast<uint64_t>(r);
		q.input_length = (c.size() + 1) * 512 - 7;
		q.hash_ids.push_back(0);
		q.hash_ids.insert(q.hash_ids.end(), c.begin(), c.end());
		trace.push_back(q);
	}
	ChunkStoreConfig cc;
	cc.chunk_bytes = 64 * 1024;
	cc.utilisation = 1.0;
	ChunkStoreWorkload w("conv", trace, cc);
	const auto cfg = small_model();
	const double none = waf(cfg, w, sim::Placement::none);
	CHECK(w.stats().evictions > 0);
	CHECK(w.stats().hits > 0);
	const double oracle = waf(cfg, w, sim::Placement::oracle);
	MESSAGE("chunk store WAF: none " << none << ", oracle " << oracle);
	CHECK(oracle <= none);
	auto j = w.extra();
	CHECK(j.contains("hit_ratio"));
	CHECK(j.contains("evictions"));
}
