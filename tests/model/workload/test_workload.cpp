// Unit tests of model/workload: trace parsers, extent allocator, chunk store, KV generator.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "bpf/tag.h"
#include "tests/support/temp_files.hpp"
#include "model/workload/blk_trace.hpp"
#include "model/workload/chunk_store.hpp"
#include "model/workload/cli.hpp"
#include "model/workload/extent_alloc.hpp"
#include "model/workload/kv_synth.hpp"
#include "model/workload/lifetime.hpp"
#include "model/workload/mooncake.hpp"

using namespace kvfdp;
using namespace kvfdp::workload;

namespace {

using kvfdp::test::TempFile;

// A sink that checks the filesystem never writes over live LBAs and only deallocates live
// ones, and counts what it saw.
class CheckingSink : public sim::BlockSink {
public:
	explicit CheckingSink(uint64_t lbas) : live_(lbas, 0) {}
	void write(uint64_t slba, uint64_t nlb, uint8_t cls, uint64_t writer) override
	{
		for (uint64_t l = slba; l < slba + nlb; ++l) {
			if (l >= live_.size() || live_[l])
				++double_writes;
			else
				live_[l] = 1;
		}
		written += nlb;
		class_lbas[cls % 6] += nlb;
		writers.insert(writer);
	}
	void deallocate(uint64_t slba, uint64_t nlb) override
	{
		for (uint64_t l = slba; l < slba + nlb; ++l) {
			if (l >= live_.size() || !live_[l])
				++bad_deallocs;
			else
				live_[l] = 0;
		}
		deallocated += nlb;
	}
	void begin_measurement() override { ++measurements; }
	[[nodiscard]] uint64_t live() const
	{
		uint64_t n = 0;
		for (auto b : live_)
			n += b;
		return n;
	}
	uint64_t written = 0, deallocated = 0, double_writes = 0, bad_deallocs = 0;
	uint64_t measurements = 0;
	uint64_t class_lbas[6] = {};
	std::set<uint64_t> writers;

private:
	std::vector<uint8_t> live_;
};

std::string mooncake_line(uint64_t ts, uint64_t len, const std::vector<uint64_t> &ids)
{
	std::string s = "{\"timestamp\": " + std::to_string(ts) +
			", \"input_length\": " + std::to_string(len) +
			", \"output_length\": 10, \"hash_ids\": [";
	for (size_t i = 0; i < ids.size(); ++i)
		s += (i ? ", " : "") + std::to_string(ids[i]);
	return s + "]}";
}

}  // namespace

TEST_CASE("workload: Mooncake lines parse into requests")
{
	auto r = parse_mooncake_line(mooncake_line(5, 1100, {0, 7, 9}), "t", 1);
	REQUIRE(r.ok());
	CHECK(r->timestamp_ms == 5);
	CHECK(r->input_length == 1100);
	CHECK(r->output_length == 10);
	CHECK(r->hash_ids == std::vector<uint64_t>{0, 7, 9});
}

TEST_CASE("workload: malformed Mooncake lines are reported with their line number")
{
	const char *bad[] = {
		"{\"timestamp\": 1, \"input_length\": 5, \"hash_ids\": [1, 2",     // truncated
		"[1, 2, 3]",                                                       // not an object
		"{\"input_length\": 5, \"hash_ids\": [1]}",                        // no timestamp
		"{\"timestamp\": 1, \"input_length\": 5, \"hash_ids\": [1, -2]}",  // negative id
		"{\"timestamp\": 1, \"input_length\": 5, \"hash_ids\": \"x\"}",    // not an array
		"{\"timestamp\": -1, \"input_length\": 5, \"hash_ids\": [1]}",     // negative time
	};
	for (const char *line : bad) {
		TempFile f(mooncake_line(0, 600, {0, 1}) + "\n\n" + line + "\n" +
			   mooncake_line(1, 600, {0, 2}) + "\n");
		auto t = load_mooncake(f.path);
		REQUIRE_FALSE(t.ok());
		const std::string msg = t.error().message();
		CAPTURE(msg);
		// The blank line 2 is skipped but still counted: the bad line is line 3.
		CHECK(msg.find(f.path + ":3:") != std::string::npos);
		CHECK(msg.find('\n') == std::string::npos);
	}
}

TEST_CASE("workload: a Mooncake trace loads in order and --kv-requests limits it")
{
	TempFile f(mooncake_line(0, 600, {0, 1}) + "\n" + mooncake_line(3, 512, {0}) + "\n" +
		   mooncake_line(9, 1024, {0, 1}) + "\n");
	auto all = load_mooncake(f.path);
	REQUIRE(all.ok());
	CHECK(all->size() == 3);
	CHECK(all->back().timestamp_ms == 9);
	auto two = load_mooncake(f.path, 2);
	REQUIRE(two.ok());
	CHECK(two->size() == 2);
	CHECK_FALSE(load_mooncake("/nonexistent/trace.jsonl").ok());
}

TEST_CASE("workload: the extent allocator never hands out a block twice")
{
	ExtentAllocator a(1000);
	std::vector<std::vector<Extent>> files;
	std::vector<int> owner(1000, -1);
	uint64_t seed = 12345;
	auto rnd = [&seed](uint64_t n) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		return (seed >> 33) % n;
	};
	for (int step = 0; step < 5000; ++step) {
		if (!files.empty() && (rnd(3) == 0 || a.free_blocks() < 40)) {
			size_t i = rnd(files.size());
			for (const auto &e : files[i])
				for (uint64_t b = e.start; b < e.start + e.len; ++b)
					owner[b] = -1;
			a.release(files[i]);
			files.erase(files.begin() + static_cast<long>(i));
			continue;
		}
		uint64_t n = 1 + rnd(40);
		auto ext = a.allocate(n);
		REQUIRE_FALSE(ext.empty());
		uint64_t got = 0;
		for (const auto &e : ext) {
			REQUIRE(e.start + e.len <= 1000);
			for (uint64_t b = e.start; b < e.start + e.len; ++b) {
				REQUIRE(owner[b] == -1);
				owner[b] = step;
			}
			got += e.len;
		}
		CHECK(got == n);
		files.push_back(ext);
	}
	uint64_t used = 0;
	for (int o : owner)
		used += o != -1;
	CHECK(used + a.free_blocks() == 1000);
	CHECK(a.allocate(a.free_blocks() + 1).empty());
}

TEST_CASE("workload: a fragmented free list still satisfies an allocation in pieces")
{
	ExtentAllocator a(10);
	auto x = a.allocate(10);
	REQUIRE(x.size() == 1);
	a.release({{1, 2}, {5, 1}, {8, 2}});
	CHECK(a.free_extents() == 3);
	auto y = a.allocate(5);
	uint64_t total = 0;
	for (auto &e : y)
		total += e.len;
	CHECK(total == 5);
	CHECK(y.size() == 3);
	CHECK(a.free_blocks() == 0);
	a.release(y);
	a.release({{0, 1}, {3, 2}, {6, 2}});
	CHECK(a.free_extents() == 1);  // everything merged back
	CHECK(a.free_blocks() == 10);
}

TEST_CASE("workload: chunk store accounting: bytes, hits and evictions add up")
{
	// 40 requests of 6 blocks each, half reusing the previous request's prefix.
	std::vector<MooncakeRequest> trace;
	uint64_t next = 1;
	for (int r = 0; r < 40; ++r) {
		MooncakeRequest q;
		q.timestamp_ms = static_cast<uint64_t>(r);
		q.input_length = 6 * 512 - 100;
		q.hash_ids.push_back(0);
		if (r % 2 == 1) {
			q.hash_ids.insert(q.hash_ids.end(), trace.back().hash_ids.begin() + 1,
					  trace.back().hash_ids.begin() + 3);
		}
		while (q.hash_ids.size() < 6)
			q.hash_ids.push_back(next++);
		trace.push_back(q);
	}
	ChunkStoreConfig cfg;
	cfg.chunk_bytes = 40 * 1024;  // 10 blocks of 4 KiB
	cfg.utilisation = 0.5;
	const uint64_t lbas = 8 * 100 * 4;  // 400 file blocks of 512-byte LBAs -> 20 chunks
	for (auto placement :
	     {sim::Placement::none, sim::Placement::hint, sim::Placement::oracle}) {
		CAPTURE(static_cast<int>(placement));
		ChunkStoreWorkload w("t", trace, cfg);
		CheckingSink sink(lbas);
		REQUIRE(w.run(placement, lbas, 512, sink, nullptr).ok());
		const auto &s = w.stats();
		CHECK(s.lookups == 240);
		CHECK(s.hits + s.misses == s.lookups);
		CHECK(s.chunks_written == s.misses);
		CHECK(s.hits >= 39);  // hash 0 at least, while it stays hot
		CHECK(s.evictions > 0);
		CHECK(sink.double_writes == 0);
		CHECK(sink.bad_deallocs == 0);
		CHECK(s.bytes_written == s.chunks_written * cfg.chunk_bytes);
		CHECK(sink.written * 512 == s.bytes_written);
		// Every evicted chunk was deallocated, in full; the rest are still live.
		CHECK(sink.deallocated * 512 == s.evictions * cfg.chunk_bytes);
		CHECK(sink.live() * 512 == (s.chunks_written - s.evictions) * cfg.chunk_bytes);
		CHECK((s.chunks_written - s.evictions) * cfg.chunk_bytes <= s.capacity_bytes);
		CHECK(sink.measurements == 1);
		auto j = w.extra();
		CHECK(j["evictions"] == s.evictions);
		CHECK(j["chunks_written"] == s.chunks_written);
		CHECK(j["hit_ratio"].get<double>() == doctest::Approx(double(s.hits) / 240));
		if (placement == sim::Placement::none)
			CHECK(sink.class_lbas[0] == sink.written);
		if (placement == sim::Placement::hint)
			CHECK(sink.class_lbas[KVFDP_CLASS_LONG] >= 10 * 8);  // hash 0 is LONG
	}
}

TEST_CASE("workload: oracle classes follow the actual lifetimes")
{
	LifetimeRecorder rec;
	// Four versions of equal size: lifetimes 10, 40, 20 and never.
	auto a = rec.birth(0, 100);
	auto b = rec.birth(0, 100);
	auto c = rec.birth(0, 100);
	auto d = rec.birth(0, 100);
	rec.death(a, 10);
	rec.death(b, 40);
	rec.death(c, 20);
	rec.death(b, 99);  // a second death does not move the first
	(void)d;
	auto cls = rec.classify();
	CHECK(cls[a] == KVFDP_CLASS_SHORT);
	CHECK(cls[c] == KVFDP_CLASS_MEDIUM);
	CHECK(cls[b] == KVFDP_CLASS_LONG);
	CHECK(cls[d] == KVFDP_CLASS_EXTREME);
	CHECK(rec.lifetime(b) == 40);
}

TEST_CASE("workload: block-trace lines parse, and bad ones name their line")
{
	auto w = parse_blk_line("12,W,100,8,3", "t", 2);
	REQUIRE(w.ok());
	CHECK(w->t_us == 12);
	CHECK(w->write);
	CHECK(w->slba == 100);
	CHECK(w->nlb == 8);
	CHECK(w->cls == 3);
	auto d = parse_blk_line("13,D,100,8,0\r", "t", 3);
	REQUIRE(d.ok());
	CHECK_FALSE(d->write);

	const char *bad[] = {"1,X,0,1,0",   "1,W,0,0,0", "1,W,0,1,6", "1,W,0,1",
			     "1,W,0,1,0,9", "a,W,0,1,0", "1,W,-3,1,0"};
	for (const char *line : bad) {
		TempFile f(std::string("t_us,op,slba,nlb,class\n0,W,0,8,2\n") + line + "\n");
		auto t = load_blk_trace(f.path, 1000);
		REQUIRE_FALSE(t.ok());
		CAPTURE(t.error().message());
		CHECK(t.error().message().find(f.path + ":3:") != std::string::npos);
	}
	// Beyond the capacity: an error naming the line and --capacity.
	TempFile far("t_us,op,slba,nlb,class\n0,W,0,8,2\n1,W,995,8,2\n");
	auto t = load_blk_trace(far.path, 1000);
	REQUIRE_FALSE(t.ok());
	CHECK(t.error().message().find(":3:") != std::string::npos);
	CHECK(t.error().message().find("--capacity") != std::string::npos);
	CHECK(load_blk_trace(far.path, 1003).ok());
}

TEST_CASE("workload: block-trace replay drives classes by placement")
{
	TempFile f("t_us,op,slba,nlb,class\n0,W,0,8,2\n1,W,8,8,4\n2,D,0,8,0\n3,W,0,8,2\n");
	auto recs = load_blk_trace(f.path, 64);
	REQUIRE(recs.ok());
	BlkTraceWorkload w("t", *recs);
	CheckingSink hint(128);
	REQUIRE(w.run(sim::Placement::hint, 128, 2048, hint, nullptr).ok());
	CHECK(hint.written == 48);  // 3 writes x 8 LBAs of 4 KiB = 48 LBAs of 2 KiB
	CHECK(hint.class_lbas[2] == 32);
	CHECK(hint.class_lbas[4] == 16);
	CHECK(hint.deallocated == 16);
	CheckingSink none(128);
	REQUIRE(w.run(sim::Placement::none, 128, 2048, none, nullptr).ok());
	CHECK(none.class_lbas[0] == 48);
	CheckingSink oracle(128);
	REQUIRE(w.run(sim::Placement::oracle, 128, 2048, oracle, nullptr).ok());
	CHECK(oracle.class_lbas[KVFDP_CLASS_EXTREME] == 32);  // the two that never die
	// A model smaller than the trace is refused.
	CheckingSink small(8);
	CHECK_FALSE(w.run(sim::Placement::none, 8, 4096, small, nullptr).ok());
}

TEST_CASE("workload: the synthetic KV mix keeps its populations apart under hint")
{
	KvSynthConfig cfg;
	cfg.chunk_bytes = 16 * 4096;
	cfg.utilisation = 0.8;
	cfg.drive_writes = 2.0;
	const uint64_t lbas = 4096 * 8;  // 32 MiB of 4 KiB LBAs... in 512-byte LBAs: 16 MiB
	KvSynthWorkload w(cfg);
	CheckingSink sink(lbas);
	REQUIRE(w.run(sim::Placement::hint, lbas, 512, sink, nullptr).ok());
	const auto &s = w.stats();
	CHECK(sink.double_writes == 0);
	CHECK(sink.bad_deallocs == 0);
	CHECK(s.bytes_written == s.chunks_written * cfg.chunk_bytes);
	CHECK(sink.written * 512 == s.bytes_written);
	CHECK(s.bytes_written >= 2 * lbas * 512);
	CHECK(sink.class_lbas[KVFDP_CLASS_LONG] * 512 == s.bytes[kPrefix]);
	CHECK(sink.class_lbas[KVFDP_CLASS_MEDIUM] * 512 == s.bytes[kConversation]);
	CHECK(sink.class_lbas[KVFDP_CLASS_SHORT] * 512 == s.bytes[kSingleQuery]);
	CHECK(s.sessions[kSingleQuery] > s.sessions[kPrefix]);
	CHECK(sink.live() * 512 <= s.capacity_bytes);
	CHECK(sink.measurements == 1);
	// The same seed replays the same workload.
	KvSynthWorkload again(cfg);
	CheckingSink sink2(lbas);
	REQUIRE(again.run(sim::Placement::none, lbas, 512, sink2, nullptr).ok());
	CHECK(sink2.written == sink.written);
	CHECK(sink2.class_lbas[0] == sink2.written);
}

TEST_CASE("workload: options build workloads and reject bad values with the option's name")
{
	CHECK(chunk_bytes_for("llama-3.1-8b", "1").value() == 64ull << 20);
	CHECK(chunk_bytes_for("llama-3.1-8b", "1/256").value() == 256ull << 10);
	auto bad_model = chunk_bytes_for("gpt-9", "1");
	REQUIRE_FALSE(bad_model.ok());
	CHECK(bad_model.error().message().find("--kv-model") != std::string::npos);
	CHECK_FALSE(chunk_bytes_for("llama-3.1-8b", "x/2").ok());
	CHECK_FALSE(chunk_bytes_for("llama-3.1-8b", "1/1000000").ok());

	WorkloadOptions o;
	WorkloadContext ctx;
	ctx.workload = "kv";
	CHECK(selects_workload(o, "kv"));
	CHECK_FALSE(selects_workload(o, "uniform"));
	auto w = make_workload(o, ctx);
	REQUIRE(w.ok());
	CHECK((*w)->name() == "kv");
	o.kv_mix = "0.1,0.2";
	auto bad = make_workload(o, ctx);
	REQUIRE_FALSE(bad.ok());
	CHECK(bad.error().message().find("--kv-mix") != std::string::npos);
	o.kv_mix = "0.1,0.2,0.7";
	o.kv_lifetimes = "1,0,3";
	CHECK_FALSE(make_workload(o, ctx).ok());
}

TEST_CASE("workload: the block trace's writer column is read, and garbage in it names its line")
{
	TempFile f(
		"t_us,op,slba,nlb,class,writer\n0,W,0,8,2,7\n1,W,8,8,4,18446744073709551615\n2,D,0,8,0,7\n");
	auto recs = load_blk_trace(f.path, 64);
	REQUIRE(recs.ok());
	REQUIRE(recs->size() == 3);
	CHECK((*recs)[0].writer == 7);
	CHECK((*recs)[1].writer == UINT64_MAX);
	BlkTraceWorkload w("t", *recs);
	CheckingSink sink(64);
	REQUIRE(w.run(sim::Placement::hint, 64, 4096, sink, nullptr).ok());
	CHECK(sink.writers == std::set<uint64_t>{7, UINT64_MAX});
	// Without a header either form is accepted; a 5-column trace has writer 0.
	TempFile mixed("0,W,0,8,2\n1,W,8,8,4,3\n");
	auto m = load_blk_trace(mixed.path, 64);
	REQUIRE(m.ok());
	CHECK((*m)[0].writer == 0);
	CHECK((*m)[1].writer == 3);
	for (const char *bad : {"x", "-1", "1.5", "7a", "", "99999999999999999999"}) {
		TempFile g(std::string("t_us,op,slba,nlb,class,writer\n0,W,0,8,2,1\n\n1,W,8,8,2,") +
			   bad + "\n");
		auto t = load_blk_trace(g.path, 64);
		REQUIRE_FALSE(t.ok());
		const std::string msg = t.error().message();
		CAPTURE(msg);
		CHECK(msg.find(g.path + ":4: writer") != std::string::npos);
		CHECK(msg.find('\n') == std::string::npos);
	}
	// The header says 6 columns: a 5-column row is an error.
	TempFile short_row("t_us,op,slba,nlb,class,writer\n0,W,0,8,2\n");
	auto s = load_blk_trace(short_row.path, 64);
	REQUIRE_FALSE(s.ok());
	CHECK(s.error().message().find(":2: 5 fields where the header declares 6") !=
	      std::string::npos);
}

TEST_CASE("workload: timestamps that go backwards are refused in both trace kinds")
{
	TempFile blk("t_us,op,slba,nlb,class\n5,W,0,8,2\n5,W,8,8,2\n4,W,16,8,2\n");
	auto b = load_blk_trace(blk.path, 64);
	REQUIRE_FALSE(b.ok());
	CHECK(b.error().message().find(blk.path + ":4: t_us 4 is earlier than line 3's 5") !=
	      std::string::npos);
	TempFile kv(mooncake_line(10, 600, {0, 1}) + "\n" + mooncake_line(10, 512, {0}) + "\n" +
		    mooncake_line(9, 512, {2}) + "\n");
	auto k = load_mooncake(kv.path);
	REQUIRE_FALSE(k.ok());
	CHECK(k.error().message().find(kv.path +
				       ":3: \"timestamp\" 9 is earlier than line 2's 10") !=
	      std::string::npos);
}

TEST_CASE("workload: input_length must match the number of hash ids (512-token blocks)")
{
	CHECK(parse_mooncake_line(mooncake_line(0, 512, {1}), "t", 1).ok());
	CHECK(parse_mooncake_line(mooncake_line(0, 513, {1, 2}), "t", 1).ok());
	CHECK(parse_mooncake_line(mooncake_line(0, 0, {}), "t", 1).ok());
	for (auto [len, n] : {std::pair<uint64_t, size_t>{512, 2}, {513, 1}, {1, 0}, {2000, 3}}) {
		std::vector<uint64_t> ids(n);
		auto r = parse_mooncake_line(mooncake_line(0, len, ids), "t", 4);
		REQUIRE_FALSE(r.ok());
		const std::string msg = r.error().message();
		CAPTURE(msg);
		CHECK(msg.find("t:4: \"input_length\" " + std::to_string(len)) !=
		      std::string::npos);
		CHECK(msg.find("\"hash_ids\" has " + std::to_string(n)) != std::string::npos);
	}
}

TEST_CASE("workload: a device, FIFO or directory as a trace is named, not read")
{
	for (const char *path : {"/dev/zero", "/dev/null", "/tmp"}) {
		auto b = load_blk_trace(path, 64);
		REQUIRE_FALSE(b.ok());
		const std::string msg = b.error().message();
		CAPTURE(msg);
		CHECK(msg.find(std::string(path) + " is a") != std::string::npos);
		CHECK(msg.find("not a block trace file") != std::string::npos);
		CHECK(msg.find("Input/output error") == std::string::npos);
		auto k = load_mooncake(path);
		REQUIRE_FALSE(k.ok());
		CHECK(k.error().message().find("not a Mooncake trace file") != std::string::npos);
	}
	CHECK(load_blk_trace("/dev/zero", 64).error().message().find("a character device") !=
	      std::string::npos);
	CHECK(load_mooncake("/tmp").error().message().find("a directory") != std::string::npos);
}
