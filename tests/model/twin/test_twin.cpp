// The live WAF twin: ring, sampler, plan, and the sampled models against the unsampled run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>
#include <zlib.h>

#include "model/ftl/ftl.hpp"
#include "proto/noisy_handle.hpp"
#include "model/sim/simulate.hpp"
#include "model/workload/blk_trace.hpp"
#include "model/workload/host.hpp"
#include "model/workload/mooncake.hpp"
#include "model/twin/models.hpp"
#include "proto/twin_text.hpp"
#include "model/twin/report.hpp"
#include "model/twin/ring.hpp"
#include "model/twin/sampler.hpp"
#include "model/twin/twin.hpp"
#include "model/twin/wake.hpp"

using namespace kvfdp;

TEST_CASE("twin: a full ring drops the record and counts it, and keeps order across wrap-around")
{
	twin::Ring ring(5);  // rounded up to 8
	CHECK(ring.capacity() == 8);
	for (uint32_t i = 0; i < 8; i++)
		CHECK(ring.push(twin::Record{i, i + 1, 0, twin::Op::write, 0}));
	CHECK_FALSE(ring.push(twin::Record{99, 1, 0, twin::Op::write, 0}));
	CHECK_FALSE(ring.push(twin::Record{100, 1, 0, twin::Op::discard, 0}));
	CHECK(ring.dropped() == 2);
	CHECK(ring.pushed() == 8);
	twin::Record out[16];
	REQUIRE(ring.pop(out, 3) == 3);
	CHECK(out[0].slba == 0);
	CHECK(out[2].slba == 2);
	for (uint32_t i = 8; i < 11; i++)
		CHECK(ring.push(twin::Record{i, 1, 0, twin::Op::write, 0}));
	CHECK_FALSE(ring.push(twin::Record{11, 1, 0, twin::Op::write, 0}));
	REQUIRE(ring.pop(out, 16) == 8);
	for (uint32_t i = 0; i < 8; i++)
		CHECK(out[i].slba == i + 3);
	CHECK(ring.pop(out, 16) == 0);
	CHECK(ring.dropped() == 3);
	twin::record_write(nullptr, 0, 1, 0);  // the twin off: a no-op
}

TEST_CASE(
	"twin: a ring signals its wake when it fills to half, a quarter on while still undrained, and again only at the next crossing")
{
	twin::Wake wake;
	twin::Ring ring(16, &wake);
	twin::Record out[16];
	const auto push = [&ring](uint32_t n) {
		for (uint32_t i = 0; i < n; i++)
			REQUIRE(ring.push(twin::Record{i, 1, 0, twin::Op::write, 0}));
	};
	push(7);
	CHECK(wake.signals() == 0);
	push(1);  // 8 of 16: half
	CHECK(wake.signals() == 1);
	push(3);
	CHECK(wake.signals() == 1);
	push(1);  // 12 held, a quarter on, none taken: again
	CHECK(wake.signals() == 2);
	REQUIRE(ring.pop(out, 16) == 12);
	CHECK(ring.popped() == 12);
	push(4);  // 4 held when it looks (head 16): no signal
	CHECK(wake.signals() == 2);
	push(3);
	CHECK(wake.signals() == 2);
	push(1);  // 8 held since the pop: the next crossing
	CHECK(wake.signals() == 3);

	// Drained before the ring reached its first look: the crossing counts what is held.
	twin::Wake w2;
	twin::Ring r2(16, &w2);
	for (uint32_t i = 0; i < 4; i++)
		REQUIRE(r2.push(twin::Record{i, 1, 0, twin::Op::write, 0}));
	REQUIRE(r2.pop(out, 16) == 4);
	for (uint32_t i = 0; i < 7; i++)
		REQUIRE(r2.push(twin::Record{i, 1, 0, twin::Op::write, 0}));
	CHECK(w2.signals() == 0);  // 7 held at its first look (head 8)
	REQUIRE(r2.push(twin::Record{7, 1, 0, twin::Op::write, 0}));
	CHECK(w2.signals() == 1);  // 8 held
}

TEST_CASE("twin: a wake's wait returns at once after a signal it has not seen, else times out")
{
	twin::Wake wake;
	const uint32_t seen = wake.generation();
	CHECK_FALSE(wake.wait(seen, std::chrono::milliseconds(0)));
	wake.signal();
	CHECK(wake.wait(seen, std::chrono::hours(1)));  // the signal came after seen was read
	CHECK_FALSE(wake.wait(wake.generation(), std::chrono::milliseconds(0)));
	bool woken = false;
	std::thread waiter([&wake, &woken, g = wake.generation()] {
		woken = wake.wait(g, std::chrono::minutes(1));
	});
	wake.signal();
	waiter.join();
	CHECK(woken);  // false only after a minute without the signal
}

TEST_CASE("twin: the sampler keeps exactly `kept` regions, each at its own slot")
{
	for (uint64_t n : {1ull, 2ull, 7ull, 1000ull, 4097ull}) {
		for (uint64_t k : {uint64_t{1}, n / 3 + 1, n}) {
			twin::RegionSampler s(n, k);
			std::set<uint64_t> slots;
			for (uint64_t r = 0; r < n; r++) {
				const uint64_t sl = s.slot(r);
				if (sl == twin::RegionSampler::kNotKept)
					continue;
				CHECK(sl < k);
				CHECK(s.region_of(sl) == r);
				slots.insert(sl);
			}
			CHECK(slots.size() == std::min(n, k));
		}
	}
	// Not the first regions only: a tenth kept is spread over the space.
	twin::RegionSampler s(10000, 1000);
	uint64_t low_half = 0;
	for (uint64_t r = 0; r < 5000; r++)
		low_half += s.slot(r) != twin::RegionSampler::kNotKept;
	CHECK(low_half > 400);
	CHECK(low_half < 600);
}

TEST_CASE("twin: Ftl::memory_for is what the model allocates")
{
	model::ModelConfig c;
	for (uint64_t ru : {uint64_t{1} << 20, uint64_t{64} << 10}) {
		c.ru_size = ru;
		c.gc = ru == (uint64_t{1} << 20) ? model::GcPolicy::greedy
						 : model::GcPolicy::cost_benefit;
		auto f = model::Ftl::create(c);
		REQUIRE(f);
		CHECK((*f)->memory_bytes() == model::Ftl::memory_for(c));
	}
}

TEST_CASE("twin: the plan scales capacity and RU size by one rate and fits the bound")
{
	twin::TwinGeometry g;  // 960 GiB with 16 GiB RUs (docs/model.md), 8 handles, 7% OP
	g.nlb = (960ull << 30) / 4096;
	g.ru_size = 16ull << 30;
	g.nruh = 8;
	auto p = twin::plan_twin(g, twin::kDefaultMemoryBytes);
	REQUIRE(p);
	CHECK(p->memory_bytes <= twin::kDefaultMemoryBytes);
	CHECK(p->memory_bytes > twin::kDefaultMemoryBytes / 2);
	CHECK(p->rate < 1);
	CHECK(p->model.ru_size ==
	      static_cast<uint64_t>(std::llround(p->rate * static_cast<double>(g.ru_size))));
	const double cap = p->rate * static_cast<double>(g.nlb * 4096);
	CHECK(std::fabs(static_cast<double>(p->model.logical_bytes) - cap) <=
	      static_cast<double>(p->region_lbas * 4096));
	MESSAGE("960 GiB / 16 GiB RUs at 64 MiB: rate ", p->rate, ", model ",
		p->model.logical_bytes >> 20, " MiB, RU ", p->model.ru_size >> 10, " KiB, ",
		p->memory_bytes, " bytes");
	// A small drive fits whole: rate 1, the drive's own geometry.
	g.nlb = (256ull << 20) / 4096;
	g.ru_size = 1 << 20;
	auto whole = twin::plan_twin(g, twin::kDefaultMemoryBytes);
	REQUIRE(whole);
	CHECK(whole->rate == 1);
	CHECK(whole->model.logical_bytes == 256ull << 20);
	CHECK(whole->model.ru_size == 1 << 20);
}

TEST_CASE(
	"twin: a memory bound too small for one reclaim unit is one line naming the bound that would do")
{
	twin::TwinGeometry g;
	g.nlb = (4ull << 40) / 4096;  // 4 TiB of 1 MiB RUs: 4 Mi RUs, whatever the rate
	g.ru_size = 1 << 20;
	auto p = twin::plan_twin(g, twin::kDefaultMemoryBytes);
	REQUIRE_FALSE(p);
	const std::string m = p.error().message();
	CHECK(m.find("is too small for one reclaim unit") != std::string::npos);
	CHECK(m.find("raise --twin-memory to at least") != std::string::npos);
	CHECK(m.find('\n') == std::string::npos);
	g.ru_size = 0;
	auto unknown = twin::plan_twin(g, twin::kDefaultMemoryBytes);
	REQUIRE_FALSE(unknown);
	CHECK(unknown.error().message().find("--twin-memory 0") != std::string::npos);
	auto tiny = twin::Twin::create(twin::TwinOptions{
		twin::TwinGeometry{(1ull << 30) / 4096, 4096, 1 << 20, 8, 0.07}, 1024, 64});
	REQUIRE_FALSE(tiny);
	CHECK(tiny.error().message().find("a memory bound of 1.0 KiB is too small") !=
	      std::string::npos);
}

namespace {

// A recorded trace of docs/RESULTS.md (peer_f2fs), gunzipped and parsed.
std::vector<workload::BlkRecord> load_trace(const std::string &name)
{
	const std::string path = std::string(KVFDP_TWIN_DATA) + "/" + name + ".csv.gz";
	gzFile f = gzopen(path.c_str(), "rb");
	REQUIRE_MESSAGE(f, "cannot open ", path);
	std::vector<workload::BlkRecord> out;
	char line[512];
	uint32_t n = 0;
	while (gzgets(f, line, sizeof line)) {
		if (++n == 1)
			continue;  // the header
		std::string s(line);
		while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
			s.pop_back();
		auto r = workload::parse_blk_line(s, name, n, 6);
		REQUIRE(r);
		out.push_back(*r);
	}
	gzclose(f);
	return out;
}

// The trace's projection by a twin at k units per sampled RU; handles from the writer
// column (the handle the device got, as --placement writer replays it).
twin::TwinReport run_twin(const std::vector<workload::BlkRecord> &t, const twin::TwinGeometry &g,
			  uint32_t k)
{
	auto plan = twin::plan_twin_at(g, k);
	REQUIRE(plan);
	auto m = twin::TwinModels::create(*plan);
	REQUIRE(m);
	for (const auto &r : t)
		(*m)->apply(twin::Record{
			r.slba, r.nlb,
			static_cast<uint16_t>(std::min<uint64_t>(r.writer, g.nruh - 1)),
			r.write ? twin::Op::write : twin::Op::discard, 0});
	return (*m)->report();
}

}  // namespace

namespace {

// A sampled twin's projection against `kvfdp simulate --blk-trace` of the same records.
struct Agreement {
	double placed = 0, none = 0;  // simulate's (writer and none)
	twin::TwinReport twin;
};

Agreement compare(const std::vector<workload::BlkRecord> &trace, const model::ModelConfig &cfg,
		  uint32_t k)
{
	workload::BlkTraceWorkload w("trace", trace);
	auto placed = sim::run_one(cfg, w, sim::Placement::writer, nullptr);
	auto none = sim::run_one(cfg, w, sim::Placement::none, nullptr);
	REQUIRE(placed);
	REQUIRE(none);
	// Writers get handles in order of first write, as --placement writer gives them.
	std::vector<uint64_t> writers;
	std::vector<workload::BlkRecord> handled = trace;
	for (auto &r : handled) {
		if (!r.write)
			continue;
		size_t i = std::find(writers.begin(), writers.end(), r.writer) - writers.begin();
		if (i == writers.size())
			writers.push_back(r.writer);
		r.writer = std::min<size_t>(i, cfg.nruh - 1u);
	}
	twin::TwinGeometry g{cfg.logical_bytes / 4096, 4096, cfg.ru_size, cfg.nruh, cfg.op};
	return Agreement{placed->total.waf(), none->total.waf(), run_twin(handled, g, k)};
}

model::ModelConfig peer_config()
{
	model::ModelConfig cfg;  // as RESULTS.md ran the peer traces
	cfg.logical_bytes = 256ull << 20;
	cfg.ru_size = 1 << 20;
	cfg.op = 0.07;
	cfg.nruh = 8;
	return cfg;
}

}  // namespace

// docs/twin.md, Accuracy: `kvfdp simulate --blk-trace T --capacity 256MiB --op 0.07
// --ru-size 1MiB --placement writer|none` against the twin, whole (rate 1, the default
// bound's plan for this drive) and sampled at 1/2 (128 mapping units per sampled RU).
TEST_CASE(
	"twin: whole and at rate 1/2 the twin is within 0.02 of kvfdp simulate --blk-trace on the peer traces")
{
	const model::ModelConfig cfg = peer_config();
	twin::TwinGeometry g{cfg.logical_bytes / 4096, 4096, cfg.ru_size, cfg.nruh, cfg.op};
	auto dflt = twin::plan_twin(g, twin::kDefaultMemoryBytes);
	REQUIRE(dflt);
	CHECK(dflt->rate == 1);
	for (const char *name :
	     {"peer_xfs_learned", "peer_xfs_hint", "peer_f2fs_hints", "peer_f2fs_nohints"}) {
		const auto trace = load_trace(name);
		const Agreement whole = compare(trace, cfg, 256);
		CHECK(whole.twin.waf_placed == doctest::Approx(whole.placed).epsilon(1e-12));
		CHECK(whole.twin.waf_none == doctest::Approx(whole.none).epsilon(1e-12));
		CHECK(whole.twin.model_errors == 0);
		for (uint32_t k : {128u, 64u, 32u}) {
			const Agreement a = compare(trace, cfg, k);
			MESSAGE(std::string(name), " rate ", a.twin.rate, ": placed ",
				a.twin.waf_placed, " (simulate ", a.placed, "), none ",
				a.twin.waf_none, " (simulate ", a.none, "), saved ",
				a.twin.saved_bytes >> 20, " MiB");
			CHECK(a.twin.model_errors == 0);
			if (k == 128) {
				CHECK(std::fabs(a.twin.waf_placed - a.placed) <= 0.02);
				CHECK(std::fabs(a.twin.waf_none - a.none) <= 0.02);
			}
		}
	}
}

namespace {

// The Mooncake trace the shared-host workload replays, gunzipped to a temporary file.
std::string mooncake_path()
{
	static const std::string out = [] {
		const std::string gz = std::string(KVFDP_MOONCAKE_GZ);
		const std::string path =
			"/tmp/kvfdp-test-twin-mooncake." + std::to_string(::getpid()) + ".jsonl";
		gzFile f = gzopen(gz.c_str(), "rb");
		REQUIRE_MESSAGE(f, "cannot open ", gz);
		FILE *o = std::fopen(path.c_str(), "w");
		REQUIRE(o);
		char buf[65536];
		int n;
		while ((n = gzread(f, buf, sizeof buf)) > 0)
			std::fwrite(buf, 1, static_cast<size_t>(n), o);
		std::fclose(o);
		gzclose(f);
		return path;
	}();
	return out;
}

// Captures a workload's operations as a block trace (what `kvfdp record` would write).
struct Capture final : sim::BlockSink {
	std::vector<workload::BlkRecord> rows;
	void write(uint64_t slba, uint64_t nlb, uint8_t cls, uint64_t writer) override
	{
		workload::BlkRecord r;
		r.slba = slba;
		r.nlb = static_cast<uint32_t>(nlb);
		r.cls = cls;
		r.writer = writer;
		rows.push_back(r);
	}
	void deallocate(uint64_t slba, uint64_t nlb) override
	{
		workload::BlkRecord r;
		r.slba = slba;
		r.nlb = static_cast<uint32_t>(nlb);
		r.write = false;
		rows.push_back(r);
	}
};

}  // namespace

// The shared host of RESULTS.md (4 GiB, 16 MiB RUs, 7% OP, 90%) as a block trace: 4096
// mapping units per RU, sampled at 1/4 (1024 per sampled RU).
TEST_CASE(
	"twin: at rate 1/4 the twin is within 0.02 of kvfdp simulate --blk-trace on the shared host's trace")
{
	auto mc = workload::load_mooncake(mooncake_path());
	REQUIRE(mc);
	std::remove(mooncake_path().c_str());
	workload::HostConfig hc;
	hc.store.chunk_bytes = (64ull << 20) / 256;  // --kv-scale 1/256
	hc.store.utilisation = 0.9;
	hc.scale = 1.0 / 256;
	workload::HostWorkload host(*mc, hc);
	model::ModelConfig cfg;
	cfg.logical_bytes = 4ull << 30;
	cfg.ru_size = 16 << 20;
	cfg.op = 0.07;
	cfg.nruh = 8;
	Capture cap;
	REQUIRE(host.run(sim::Placement::hint, cfg.logical_bytes / 4096, 4096, cap, nullptr));
	for (uint32_t k : {1024u, 256u}) {
		const Agreement a = compare(cap.rows, cfg, k);
		MESSAGE("host rate ", a.twin.rate, ": placed ", a.twin.waf_placed, " (simulate ",
			a.placed, "), none ", a.twin.waf_none, " (simulate ", a.none, "), saved ",
			a.twin.saved_bytes >> 20, " MiB");
		CHECK(a.twin.model_errors == 0);
		CHECK(a.twin.saved_bytes > 0);
		if (k == 1024) {
			CHECK(std::fabs(a.twin.waf_placed - a.placed) <= 0.02);
			CHECK(std::fabs(a.twin.waf_none - a.none) <= 0.02);
		}
	}
}

TEST_CASE("twin: the thread applies what the queues pushed, and stop drains the rest")
{
	twin::TwinOptions o;
	o.geometry = twin::TwinGeometry{(64ull << 20) / 4096, 4096, 1 << 20, 4, 0.28};
	o.ring_records = 1024;
	auto t = twin::Twin::create(o);
	REQUIRE(t);
	(*t)->add_rings(2);
	(*t)->start();
	uint64_t pushed = 0;
	for (uint64_t i = 0; i < 4000; i++) {
		twin::Ring &r = (*t)->ring(static_cast<uint16_t>(i % 2));
		pushed += r.push(twin::Record{(i * 8) % ((64ull << 20) / 4096 - 8), 8,
					      static_cast<uint16_t>(i % 4), twin::Op::write, 0});
	}
	(*t)->stop();
	const twin::TwinReport rep = (*t)->report();
	CHECK(rep.records == pushed);
	CHECK(rep.records + rep.dropped == 4000);
	CHECK(rep.host_bytes == pushed * 8 * 4096);
	CHECK(rep.memory_bytes == (*t)->plan().memory_bytes + 2 * 1024 * sizeof(twin::Record) +
					  (*t)->plan().window_records * twin::kWindowRecordBytes);
}

namespace {

// Spins until done() holds, or a minute has passed; whether it held.
template <typename F> bool within_a_minute(F done)
{
	const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
	while (!done()) {
		if (std::chrono::steady_clock::now() > until)
			return false;
		std::this_thread::yield();
	}
	return true;
}

}  // namespace

TEST_CASE(
	"twin: with the thread asleep for an hour, a ring filling to half wakes it, and report() applies what it left in the rings")
{
	twin::TwinOptions o;
	o.geometry = twin::TwinGeometry{(64ull << 20) / 4096, 4096, 1 << 20, 4, 0.28};
	o.ring_records = 1024;
	o.idle_wait = std::chrono::hours(1);
	auto t = twin::Twin::create(o);
	REQUIRE(t);
	(*t)->add_rings(1);
	twin::Ring &ring = (*t)->ring(0);
	uint64_t n = 0;
	const auto push = [&ring, &n](uint64_t k) {
		for (uint64_t i = 0; i < k; i++, n++)
			REQUIRE(ring.push(twin::Record{(n * 8) % ((64ull << 20) / 4096 - 8), 8,
						       static_cast<uint16_t>(n % 4),
						       twin::Op::write, 0}));
	};
	push(1);
	(*t)->start();
	// The thread's first drain done, then its sleep: it takes nothing more until a signal.
	// (Pushing while it still drains would let it take some of the 511, and the ring would
	// then never hold half: no crossing, no signal, as designed.)
	REQUIRE(within_a_minute([&] { return (*t)->sleeps() >= 1; }));
	REQUIRE(ring.popped() == 1);
	push(511);
	CHECK(ring.popped() == 1);  // asleep: the 511 wait in the ring
	// 512 of 1024 held: the crossing's signal ends the hour's sleep
	push(1);
	CHECK(within_a_minute([&] { return ring.popped() >= 513; }));
	push(10);  // under half: the thread sleeps on
	const twin::TwinReport rep = (*t)->report();
	CHECK(rep.records == 523);  // report() took the 10 from the ring itself
	CHECK(rep.dropped == 0);
	push(5);
	const proto::TwinWindow w = (*t)->window();
	CHECK(w.total == 528);  // and so does window()
	(*t)->stop();
	CHECK(ring.popped() == 528);
}

// docs/twin.md, Noisy handles: the placed copy's relocations by handle, projected, in the
// stats reply's twin object; a handle overwritten at random among ones written in order is
// the noisy one, whole and sampled at 1/2.
TEST_CASE(
	"twin: the placed copy counts GC relocations by handle; the churned handle is the noisy one")
{
	const twin::TwinGeometry g{(64ull << 20) / 4096, 4096, 1 << 20, 4, 0.15};
	const uint64_t span =
		(24ull << 20) /
		4096;  // handle 1 churns [0, span), handle 2 writes [span, 2 span) once
	for (uint32_t k : {256u, 128u}) {
		auto plan = twin::plan_twin_at(g, k);
		REQUIRE(plan);
		auto m = twin::TwinModels::create(*plan);
		REQUIRE(m);
		uint64_t x = 88172645463325252ull, seq = 0;
		for (uint64_t i = 0; i < 60000; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			(*m)->apply(twin::Record{x % span, 1, 1, twin::Op::write, 0});
			if (i % 8 == 0 && seq < span)
				(*m)->apply(twin::Record{span + seq++, 1, 2, twin::Op::write, 0});
		}
		const twin::TwinReport rep = (*m)->report();
		REQUIRE(rep.handles_placed.size() == 4);
		const proto::TwinStats st = twin::report_stats(rep);
		REQUIRE(st.handles.size() == 4);
		CHECK(st.handles[2].handle == 2);
		CHECK(st.handles[1].host_bytes == doctest::Approx(60000.0 * 4096).epsilon(0.02));
		CHECK(st.handles[2].relocated_bytes == 0);
		CHECK(st.handles[1].relocated_bytes > 0);
		CHECK(st.handles[1].relocated_bytes <= st.placed.relocated_bytes);
		const auto noisy = proto::find_noisy_handle(st.handles);
		REQUIRE(noisy);
		CHECK(noisy->handle == 1);
		CHECK(proto::twin_text(st).find("relocated by handle    1: ") != std::string::npos);
		MESSAGE("at ", k, " units per RU: handle 1 relocated ",
			st.handles[1].relocated_bytes, " of ", st.handles[1].host_bytes,
			" host bytes; WAF placed ", rep.waf_placed);
	}
}
