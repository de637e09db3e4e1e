// Bench (host path) of the bounded store: a batch of 32 x 4 MiB loads against 32 sequential
// kvgpu_load calls and raw O_DIRECT reads of the same bytes; evicts into a full store (every
// put unlinks a victim) against raw O_DIRECT writes; the cost of one eviction as an unlink
// against a hole punched in a segment file; restart time of a 100,000-chunk store.
// Environment: KVGPU_BENCH_DIRS=name=dir,... (default var-tmp=/var/tmp,tmpfs=/dev/shm),
// KVGPU_BENCH_REPS (default 5), KVGPU_BENCH_RESTART_CHUNKS (default 100000; its directory is
// the first target), KVGPU_BENCH_JSON (default bench_kvgpu_store.json here).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kvgpu/kvgpu.h"
#include "kvgpu/store_index.hpp"
#include "tests/kvgpu/kvgpu_bench.hpp"
#include "tests/kvgpu/kvgpu_store_util.hpp"

using namespace kvfdp::gpu;
using namespace kvfdp::gpu::test;
using kvfdp::gpu::bench::gbps;
using kvfdp::gpu::bench::now_s;

namespace {

constexpr uint64_t kChunk = 4u << 20;
constexpr unsigned kBatch = 32;

struct Figures {
	double seq_ms = 1e30, batch_ms = 1e30, staged8_ms = 1e30, raw_read_gbps = 0;
	double evict_full_gbps = 0, raw_write_gbps = 0, unlink_us = 1e30, punch_us = 1e30, segment_us = 1e30;
	uint64_t max_io = 0;
	bool verified = true;
};

// 32 chunks in a store; sequential loads, one batch, and a batch after a prefetch, best of reps.
void load_figures(const std::string &dir, uint64_t chunk, unsigned reps, Figures &f)
{
	kvgpu_options o = engine_options(KVGPU_ENGINE_HOST);
	o.capacity_bytes = 64 * file_bytes(chunk);
	Ctx c(dir, o);
	REQUIRE(c.rc == 0);
	std::vector<std::vector<unsigned char>> src(kBatch), dst(kBatch, std::vector<unsigned char>(chunk));
	std::vector<std::string> keys(kBatch);
	std::vector<const char *> kp(kBatch);
	std::vector<void *> dp(kBatch);
	std::vector<size_t> sz(kBatch, chunk);
	std::vector<int64_t> res(kBatch);
	for (unsigned i = 0; i < kBatch; i++) {
		keys[i] = "bench/" + std::to_string(i);
		src[i] = pattern(chunk, i + 1);
		int64_t t = kvgpu_evict(c.c, src[i].data(), chunk, keys[i].c_str(), KVGPU_LIFETIME_SHORT, nullptr);
		REQUIRE(kvgpu_wait(c.c, t) == 0);
		kp[i] = keys[i].c_str();
		dp[i] = dst[i].data();
	}
	for (unsigned r = 0; r < reps; r++) {
		double t0 = now_s();
		for (unsigned i = 0; i < kBatch; i++)
			REQUIRE(kvgpu_load(c.c, kp[i], dp[i], chunk, nullptr) == int64_t(chunk));
		double t1 = now_s();
		int64_t b = kvgpu_load_batch(c.c, kBatch, kp.data(), dp.data(), sz.data(), res.data(), nullptr);
		REQUIRE(b > 0);
		REQUIRE(kvgpu_batch_wait(c.c, b) == 0);
		double t2 = now_s();
		f.seq_ms = std::min(f.seq_ms, (t1 - t0) * 1e3);
		f.batch_ms = std::min(f.batch_ms, (t2 - t1) * 1e3);
		for (unsigned i = 0; i < kBatch; i++)
			f.verified = f.verified && dst[i] == src[i];
		// Prefetched ahead (reads untimed, as when issued while the GPU still computes), then a
		// batch of those 8 copies from the staged buffers with no read.
		REQUIRE(kvgpu_prefetch(c.c, 8, kp.data()) == 8);
		REQUIRE(kvgpu_wait(c.c, 0) == 0); // every job so far, the prefetch reads included
		double t3 = now_s();
		int64_t b2 = kvgpu_load_batch(c.c, 8, kp.data(), dp.data(), sz.data(), res.data(), nullptr);
		REQUIRE(kvgpu_batch_wait(c.c, b2) == 0);
		f.staged8_ms = std::min(f.staged8_ms, (now_s() - t3) * 1e3);
	}
	f.max_io = stats_of(c.c).max_io_in_flight;
	// The raw comparison: the same bytes from files read with O_DIRECT, 8 x 4 MiB in flight.
	double w = bench::raw_files(dir, chunk, kBatch, 4u << 20, 8, true, false);
	REQUIRE(w > 0);
	for (unsigned r = 0; r < reps; r++)
		f.raw_read_gbps = std::max(f.raw_read_gbps, bench::raw_files(dir, chunk, kBatch, 4u << 20, 8, true, true) / 1e9);
	bench::remove_raw_files(dir, kBatch);
}

// A store full from the start (every put evicts one chunk by unlink) against raw writes.
void evict_figures(const std::string &dir, unsigned reps, Figures &f)
{
	constexpr unsigned kHeld = 16, kPuts = 64;
	std::vector<unsigned char> src = pattern(kChunk, 9);
	for (unsigned r = 0; r < reps; r++) {
		TempDir d(dir);
		kvgpu_options o = engine_options(KVGPU_ENGINE_HOST);
		o.capacity_bytes = kHeld * file_bytes(kChunk);
		Ctx c(d.path(), o);
		REQUIRE(c.rc == 0);
		for (unsigned i = 0; i < kHeld; i++)
			REQUIRE(kvgpu_wait(c.c, kvgpu_evict(c.c, src.data(), kChunk, ("fill/" + std::to_string(i)).c_str(), 2, nullptr)) == 0);
		double t0 = now_s();
		for (unsigned i = 0; i < kPuts; i++)
			REQUIRE(kvgpu_evict(c.c, src.data(), kChunk, ("put/" + std::to_string(i)).c_str(), 2, nullptr) > 0);
		REQUIRE(kvgpu_wait(c.c, 0) == 0);
		f.evict_full_gbps = std::max(f.evict_full_gbps, gbps(kPuts * kChunk, now_s() - t0));
		REQUIRE(stats_of(c.c).evictions == kPuts);
		double raw = bench::raw_files(d.path(), kChunk, kPuts, 4u << 20, 8, true, false);
		REQUIRE(raw > 0);
		f.raw_write_gbps = std::max(f.raw_write_gbps, raw / 1e9);
		// The eviction itself: unlinking a written 4 MiB file, or punching 4 MiB out of a
		// 256 MiB segment file (what whole-segment deallocation would do per chunk).
		double t1 = now_s();
		bench::remove_raw_files(d.path(), kPuts);
		f.unlink_us = std::min(f.unlink_us, (now_s() - t1) * 1e6 / kPuts);
		REQUIRE(bench::raw_files(d.path(), kPuts * kChunk - kBlock, 1, 4u << 20, 8, true, false) > 0);
		int fd = ::open((d.path() + "/raw-0").c_str(), O_RDWR);
		REQUIRE(fd >= 0);
		double t2 = now_s();
		for (unsigned i = 0; i < kPuts; i++)
			REQUIRE(::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(i * kChunk), off_t(kChunk)) == 0);
		f.punch_us = std::min(f.punch_us, (now_s() - t2) * 1e6 / kPuts);
		::close(fd);
		bench::remove_raw_files(d.path(), 1);
		// A whole segment of 64 chunks freed at once (the segment design's eviction), per chunk.
		REQUIRE(bench::raw_files(d.path(), kPuts * kChunk - kBlock, 1, 4u << 20, 8, true, false) > 0);
		double t3 = now_s();
		bench::remove_raw_files(d.path(), 1);
		f.segment_us = std::min(f.segment_us, (now_s() - t3) * 1e6 / kPuts);
	}
}

struct Restart {
	uint64_t chunks = 0;
	double fill_s = 0, open_ms = 1e30, rebuild_ms = 0;
	uint64_t rebuilt_chunks = 0;
};

// n one-byte chunks (8 KiB files), then reopen (journal replay + one readdir), then reopen
// after a byte of the journal was flipped (a full rebuild from the chunk headers).
Restart restart_figures(const std::string &dir, uint64_t n)
{
	Restart r;
	r.chunks = n;
	TempDir d(dir);
	kvgpu_options o = engine_options(KVGPU_ENGINE_HOST, 64 * 1024, 8);
	o.capacity_bytes = (n + 16) * file_bytes(1);
	o.prefetch_slots = 0;
	{
		Ctx c(d.path(), o);
		REQUIRE(c.rc == 0);
		unsigned char byte = 7;
		double t0 = now_s();
		for (uint64_t i = 0; i < n; i++)
			REQUIRE(kvgpu_evict(c.c, &byte, 1, ("r/" + std::to_string(i)).c_str(), 2, nullptr) > 0);
		REQUIRE(kvgpu_wait(c.c, 0) == 0);
		r.fill_s = now_s() - t0;
	}
	for (int i = 0; i < 3; i++) {
		Ctx c(d.path(), o);
		REQUIRE(c.rc == 0);
		kvgpu_stats_t s = stats_of(c.c);
		REQUIRE(s.chunks == n);
		r.open_ms = std::min(r.open_ms, double(s.open_ns) / 1e6);
	}
	{
		int fd = ::open((d.path() + "/" + kIndexName).c_str(), O_RDWR);
		REQUIRE(fd >= 0);
		char b = 0;
		REQUIRE(::pread(fd, &b, 1, 100) == 1);
		b ^= 1;
		REQUIRE(::pwrite(fd, &b, 1, 100) == 1);
		::close(fd);
		Ctx c(d.path(), o);
		REQUIRE(c.rc == 0);
		kvgpu_stats_t s = stats_of(c.c);
		CHECK(s.index_error == KVGPU_ERR_INDEX);
		r.rebuilt_chunks = s.chunks;
		r.rebuild_ms = double(s.open_ns) / 1e6;
	}
	return r;
}

} // namespace

TEST_CASE("kvgpu bench: bounded store, batched loads, evictions and restart (host path)")
{
	std::vector<bench::Target> targets = bench::env_targets("KVGPU_BENCH_DIRS");
	if (targets.empty())
		targets = {{"var-tmp", "/var/tmp"}, {"tmpfs", "/dev/shm"}};
	unsigned reps = unsigned(bench::env_u64("KVGPU_BENCH_REPS", 5));
	nlohmann::json j;
	j["bench"] = "kvgpu-store-host";
	j["repetitions"] = reps;
	for (const bench::Target &t : targets) {
		TempDir d(t.dir);
		REQUIRE(d.ok());
		// Where latency rather than bandwidth bounds a load: 32 x 256 KiB.
		Figures small;
		load_figures(d.path(), 256u << 10, reps, small);
		std::printf("%-8s %-6s 32 x 256 KiB loads: sequential %.2f ms, batch %.2f ms (%.2fx; %.2f GB/s, raw "
			    "O_DIRECT read %.2f GB/s); verified %d\n",
			    t.name.c_str(), fs_name(t.dir).c_str(), small.seq_ms, small.batch_ms, small.seq_ms / small.batch_ms,
			    gbps(kBatch * (256u << 10), small.batch_ms / 1e3), small.raw_read_gbps, small.verified ? 1 : 0);
		CHECK(small.verified);
		j["targets"][t.name + "-256k"] = {{"sequential_ms", small.seq_ms}, {"batch_ms", small.batch_ms},
						  {"batch_speedup", small.seq_ms / small.batch_ms},
						  {"raw_read_gbps", small.raw_read_gbps}};
		Figures f;
		load_figures(d.path(), kChunk, reps, f);
		evict_figures(d.path(), reps, f);
		double batch_gbps = gbps(kBatch * kChunk, f.batch_ms / 1e3);
		std::printf("%-8s %-6s 32 x 4 MiB loads: sequential %.1f ms, batch %.1f ms (%.2fx; %.2f GB/s, raw O_DIRECT "
			    "read %.2f GB/s, ratio %.2f; max %llu reads in flight), 8 prefetched %.1f ms; "
			    "evicts into a full store %.2f GB/s vs raw O_DIRECT write %.2f GB/s (ratio %.2f); "
			    "one eviction: unlink %.0f us, punch hole %.0f us, 1/64 of a segment's unlink %.0f us; verified %d\n",
			    t.name.c_str(), fs_name(t.dir).c_str(), f.seq_ms, f.batch_ms, f.seq_ms / f.batch_ms, batch_gbps,
			    f.raw_read_gbps, batch_gbps / f.raw_read_gbps, static_cast<unsigned long long>(f.max_io),
			    f.staged8_ms, f.evict_full_gbps, f.raw_write_gbps, f.evict_full_gbps / f.raw_write_gbps,
			    f.unlink_us, f.punch_us, f.segment_us, f.verified ? 1 : 0);
		std::fflush(stdout);
		CHECK(f.verified);
		j["targets"][t.name] = {{"fs", fs_name(t.dir)},
					{"sequential_ms", f.seq_ms},
					{"batch_ms", f.batch_ms},
					{"batch_speedup", f.seq_ms / f.batch_ms},
					{"batch_gbps", batch_gbps},
					{"raw_read_gbps", f.raw_read_gbps},
					{"batch_over_raw_read", batch_gbps / f.raw_read_gbps},
					{"prefetched_8_ms", f.staged8_ms},
					{"max_io_in_flight", f.max_io},
					{"evict_full_store_gbps", f.evict_full_gbps},
					{"raw_write_gbps", f.raw_write_gbps},
					{"unlink_us", f.unlink_us},
					{"punch_hole_us", f.punch_us},
					{"segment_unlink_per_chunk_us", f.segment_us}};
	}
	uint64_t n = bench::env_u64("KVGPU_BENCH_RESTART_CHUNKS", 100000);
	Restart r = restart_figures(targets.front().dir, n);
	std::printf("restart of a %llu-chunk store in %s: open %.0f ms (journal replay + readdir); after a corrupt "
		    "journal %.0f ms (rebuilt from %llu headers); filling it took %.1f s\n",
		    static_cast<unsigned long long>(r.chunks), targets.front().dir.c_str(), r.open_ms, r.rebuild_ms,
		    static_cast<unsigned long long>(r.rebuilt_chunks), r.fill_s);
	CHECK(r.rebuilt_chunks == n);
	j["restart"] = {{"chunks", r.chunks}, {"dir", targets.front().dir}, {"open_ms", r.open_ms},
			{"rebuild_ms", r.rebuild_ms}, {"fill_s", r.fill_s}};
	const char *path = std::getenv("KVGPU_BENCH_JSON");
	std::ofstream(path && *path ? path : "bench_kvgpu_store.json") << j.dump(2) << "\n";
}
