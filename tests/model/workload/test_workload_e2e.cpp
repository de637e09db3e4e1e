// End to end: the KV workloads through `kvfdp simulate`'s run_one on a small FDP SSD model.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "model/ftl/model_config.hpp"
#include "placement/learner.hpp"
#include "model/sim/simulate.hpp"
#include "model/workload/chunk_store.hpp"
#include "model/workload/host.hpp"
#include "model/workload/kv_synth.hpp"

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

// Conversations: each request resends its conversation's blocks and adds two more, so
// blocks are reused for a while and then die. Requests are step_ms apart.
std::vector<MooncakeRequest> conversations(int requests, uint64_t step_ms)
{
	std::vector<MooncakeRequest> trace;
	uint64_t next = 1;
	std::vector<std::vector<uint64_t>> convs(40);
	uint64_t x = 7;
	for (int r = 0; r < requests; ++r) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		auto &c = convs[(x >> 33) % convs.size()];
		if (c.size() > 24 || ((x >> 20) % 8) == 0)
			c.clear();
		c.push_back(next++);
		c.push_back(next++);
		MooncakeRequest q;
		q.timestamp_ms = static_cast<uint64_t>(r) * step_ms;
		q.input_length = (c.size() + 1) * 512 - 7;
		q.hash_ids.push_back(0);
		q.hash_ids.insert(q.hash_ids.end(), c.begin(), c.end());
		trace.push_back(q);
	}
	return trace;
}

}  // namespace

TEST_CASE("workload: oracle <= hint <= none WAF for the synthetic KV mix")
{
	const auto cfg = small_model();
	KvSynthConfig kc;
	kc.chunk_bytes = 64 * 1024;  // 16 chunks per RU
	kc.utilisation = 1.0;
	kc.drive_writes = 3.0;
	KvSynthWorkload w(kc);
	const double none = waf(cfg, w, sim::Placement::none);
	const double hint = waf(cfg, w, sim::Placement::hint);
	const double oracle = waf(cfg, w, sim::Placement::oracle);
	MESSAGE("synthetic KV WAF: none " << none << ", hint " << hint << ", oracle " << oracle);
	CHECK(none > 1.05);  // GC matters on this model
	CHECK(hint <= none);
	CHECK(oracle <= hint);
}

TEST_CASE("workload: the chunk store runs on the model, and oracle placement beats none")
{
	const std::vector<MooncakeRequest> trace = conversations(6000, 1);
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

TEST_CASE("workload: the shared host runs every writer; writer and learned placement beat none")
{
	HostConfig hc;
	hc.store.chunk_bytes = 64 * 1024;
	hc.store.utilisation = 1.0;
	hc.scale = 1.0 / 1024;  // 64 KiB chunks of a 64 MiB-per-block model
	hc.staging_s = 2.0;
	hc.weights_bytes = 8ull << 30;  // 8 MiB scaled
	hc.swap_s = 120;
	hc.log_rate = 4 << 20;         // 4 KiB/s scaled
	hc.log_file_bytes = 64 << 20;  // 64 KiB files
	HostWorkload w(conversations(6000, 100), hc);
	const auto cfg = small_model();
	auto none = sim::run_one(cfg, w, sim::Placement::none, nullptr);
	REQUIRE_MESSAGE(none.ok(), (none.ok() ? "" : none.error().message()));
	const auto j = w.extra();
	CHECK(j["staging"]["bytes"].get<uint64_t>() > 0);
	CHECK(j["logs"]["bytes"].get<uint64_t>() > 0);
	CHECK(j["logs"]["rotations"].get<uint64_t>() > hc.log_keep);
	CHECK(j["weights"]["swaps"].get<uint64_t>() >= 4);  // 600 s of trace, every 120 s
	CHECK(j["engines"].size() == 1);
	CHECK(j["evictions"].get<uint64_t>() > 0);
	CHECK(none->host_bytes > 0);
	auto writer = sim::run_one(cfg, w, sim::Placement::writer, nullptr);
	auto learned = sim::run_one(cfg, w, sim::Placement::learned, nullptr);
	REQUIRE(writer.ok());
	REQUIRE(learned.ok());
	CHECK(writer->extra["writers"] == 4);  // engine, staging, logs, weights
	MESSAGE("host WAF: none " << none->waf << ", writer " << writer->waf << ", learned "
				  << learned->waf);
	CHECK(writer->waf < none->waf);
	CHECK(learned->waf < none->waf);
	CHECK(learned->extra["learned"]["groups"].get<int>() >= 2);
}

TEST_CASE("workload: host writers that restart get fresh ids, or keep theirs; the learner's "
	  "table holds them")
{
	HostConfig hc;
	hc.store.chunk_bytes = 64 * 1024;
	hc.store.utilisation = 1.0;
	hc.scale = 1.0 / 1024;
	hc.weights_bytes = 8ull << 30;
	hc.swap_s = 120;
	hc.log_rate = 4 << 20;
	hc.log_file_bytes = 64 << 20;
	hc.restart_every = 1.0 / 16;
	const auto cfg = small_model();
	HostWorkload fresh(conversations(6000, 100), hc);
	auto w = sim::run_one(cfg, fresh, sim::Placement::writer, nullptr);
	REQUIRE(w.ok());
	const uint64_t ids = fresh.extra()["writer_ids"].get<uint64_t>();
	CHECK(fresh.extra()["restarts"].get<uint64_t>() + 4 == ids);
	CHECK(ids > 16 * 4);  // more than a capacity written: each writer restarted 16+ times
	// The writer policy sees every id that wrote (the weights writer may restart unwritten).
	CHECK(w->extra["writers"].get<uint64_t>() > 4);
	CHECK(w->extra["writers"].get<uint64_t>() <= ids);
	auto l = sim::run_one(cfg, fresh, sim::Placement::learned, nullptr);
	REQUIRE(l.ok());
	CHECK(l->extra["learned"]["overflow_bytes"] == 0);
	CHECK(l->extra["learned"]["key_count"].get<uint64_t>() <= placement::Learner::kMaxKeys);

	hc.restart_keeps_id = true;
	HostWorkload kept(conversations(6000, 100), hc);
	auto k = sim::run_one(cfg, kept, sim::Placement::writer, nullptr);
	REQUIRE(k.ok());
	CHECK(kept.extra()["writer_ids"] == 4);
	CHECK(k->extra["writers"] == 4);
}

TEST_CASE("workload: host engines replay at their own speeds; bad host options name the option")
{
	HostConfig hc;
	hc.store.chunk_bytes = 64 * 1024;
	hc.store.utilisation = 0.9;
	hc.scale = 1.0 / 1024;
	hc.engines = 2;
	hc.speeds = {1, 3};
	hc.staging_s = 0;
	hc.log_rate = 0;
	hc.weights_bytes = 0;
	HostWorkload w(conversations(3000, 100), hc);
	auto r = sim::run_one(small_model(), w, sim::Placement::none, nullptr);
	REQUIRE(r.ok());
	const auto j = w.extra();
	REQUIRE(j["engines"].size() == 2);
	const double slow = j["engines"][0]["requests"].get<double>();
	const double fast = j["engines"][1]["requests"].get<double>();
	CHECK(slow == doctest::Approx(3000).epsilon(0.01));
	CHECK(fast == doctest::Approx(9000).epsilon(0.01));
	CHECK(j["staging"]["bytes"] == 0);
	CHECK(j["weights"]["bytes"] == 0);

	struct Bad {
		HostConfig c;
		const char *want;
	};
	HostConfig base = hc;
	std::vector<Bad> bad;
	bad.push_back({base, "--host-speeds"});
	bad.back().c.speeds = {1};
	bad.push_back({base, "--host-shares: the shares must add up to 1"});
	bad.back().c.shares = {0.5, 0.4};
	bad.push_back({base, "--host-engines"});
	bad.back().c.engines = 0;
	bad.push_back({base, "--host-staging-s"});
	bad.back().c.staging_s = -1;
	bad.push_back({base, "--host-restart-every"});
	bad.back().c.restart_every = -0.5;
	for (const Bad &b : bad) {
		auto v = HostWorkload::validate(b.c);
		REQUIRE_FALSE(v.ok());
		CHECK(v.error().message().find(b.want) != std::string::npos);
	}
	// Weights as large as the device leave the stores no room: a clear error, not a crash.
	HostConfig huge = hc;
	huge.weights_bytes = 1ull << 40;
	HostWorkload hw(conversations(100, 100), huge);
	auto e = sim::run_one(small_model(), hw, sim::Placement::none, nullptr);
	REQUIRE_FALSE(e.ok());
	CHECK(e.error().message().find("leaves the KV stores no room") != std::string::npos);
}
