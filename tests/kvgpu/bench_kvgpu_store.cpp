// Bench (host path) of the bounded store: a batch of 32 x 4 MiB (and 256 KiB) loads against 32
// sequential kvgpu_load calls and raw O_DIRECT reads of the same files at QD1 and QD = slots,
// medians over rounds; the put latency into a full store with the victims unlinked by the
// reclaimer or inline; raw O_DIRECT writes; one eviction as an unlink against a hole punched in
// a segment file; restart time of a 100,000-chunk store.
// Environment: KVGPU_BENCH_DIRS=name=dir,... (default var-tmp=/var/tmp,tmpfs=/dev/shm),
// KVGPU_BENCH_REPS (rounds, default 5), KVGPU_BENCH_LOAD_KIB (load chunk sizes, default 256,4096),
// KVGPU_BENCH_CHECKSUM (0: loads without the CRC32C, to see its share), KVGPU_BENCH_RESTART_CHUNKS
// (default 100000; its directory is the first target), KVGPU_BENCH_JSON (default
// bench_kvgpu_store.json here).
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

// Samples of one measurement over the rounds: the median is the figure, min and max its spread.
struct Samples {
	std::vector<double> v;
	void add(double x) { v.push_back(x); }
	[[nodiscard]] double median() const
	{
		std::vector<double> w = v;
		std::sort(w.begin(), w.end());
		return w.empty()      ? 0
		       : w.size() % 2 ? w[w.size() / 2]
				      : (w[w.size() / 2 - 1] + w[w.size() / 2]) / 2;
	}
	[[nodiscard]] double min() const
	{
		return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
	}
	[[nodiscard]] double max() const
	{
		return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
	}
	[[nodiscard]] nlohmann::json json() const
	{
		return {{"median", median()}, {"min", min()}, {"max", max()}, {"samples", v}};
	}
};

struct Loads {
	Samples seq_ms, batch_ms, raw_qd1_ms, raw_qdn_ms, staged8_ms;
	unsigned depth = 0;
	uint64_t max_io = 0;
	int direct = 0;
	bool verified = true;
};

// 32 chunks in a store. Every round measures, in an order that rotates with the round: 32
// sequential kvgpu_load calls, one kvgpu_load_batch of the 32, and the same 32 chunk files (the
// store's own) read whole with O_DIRECT over io_uring in slot-sized pieces, one read in flight
// (what sequential loads could reach) and `slots` in flight (what the batch's ring allows).
// Both sides read with O_DIRECT, so no page cache holds either; the figures are the medians.
Loads load_figures(const std::string &dir, uint64_t chunk, unsigned reps)
{
	Loads f;
	kvgpu_options o = engine_options(KVGPU_ENGINE_HOST);
	o.capacity_bytes = 64 * file_bytes(chunk);
	o.checksum = uint32_t(bench::env_u64("KVGPU_BENCH_CHECKSUM", 1));
	f.depth = o.slots;
	Ctx c(dir, o);
	REQUIRE(c.rc == 0);
	f.direct = stats_of(c.c).direct_io;
	std::vector<std::vector<unsigned char>> src(kBatch),
		dst(kBatch, std::vector<unsigned char>(chunk));
	std::vector<std::string> keys(kBatch), paths(kBatch);
	std::vector<const char *> kp(kBatch);
	std::vector<void *> dp(kBatch);
	std::vector<size_t> sz(kBatch, chunk);
	std::vector<int64_t> res(kBatch);
	for (unsigned i = 0; i < kBatch; i++) {
		keys[i] = "bench/" + std::to_string(i);
		paths[i] = dir + "/" + key_to_name(keys[i]);
		src[i] = pattern(chunk, i + 1);
		int64_t t = kvgpu_evict(c.c, src[i].data(), chunk, keys[i].c_str(),
					KVGPU_LIFETIME_SHORT, nullptr);
		REQUIRE(kvgpu_wait(c.c, t) == 0);
		kp[i] = keys[i].c_str();
		dp[i] = dst[i].data();
	}
	auto check = [&] {
		for (unsigned i = 0; i < kBatch; i++)
			f.verified = f.verified && dst[i] == src[i];
		for (auto &d : dst)
			std::fill(d.begin(), d.end(), 0);
	};
	for (unsigned r = 0; r < reps; r++) {
		for (unsigned m = 0; m < 4; m++) {
			double t0 = now_s();
			switch ((m + r) % 4) {
			case 0:
				for (unsigned i = 0; i < kBatch; i++)
					REQUIRE(kvgpu_load(c.c, kp[i], dp[i], chunk, nullptr) ==
						int64_t(chunk));
				f.seq_ms.add((now_s() - t0) * 1e3);
				check();
				break;
			case 1: {
				int64_t b = kvgpu_load_batch(c.c, kBatch, kp.data(), dp.data(),
							     sz.data(), res.data(), nullptr);
				REQUIRE(b > 0);
				REQUIRE(kvgpu_batch_wait(c.c, b) == 0);
				f.batch_ms.add((now_s() - t0) * 1e3);
				check();
				break;
			}
			default: {
				unsigned depth = (m + r) % 4 == 2 ? 1 : f.depth;
				double bps = bench::raw_files(dir, chunk, kBatch, o.slot_bytes,
							      depth, true, true, &paths);
				REQUIRE(bps > 0);
				(depth == 1 ? f.raw_qd1_ms : f.raw_qdn_ms)
					.add(double(kBatch * chunk) / bps * 1e3);
			}
			}
		}
		// Prefetched ahead (reads untimed, as when issued while the GPU still computes), then a
		// batch of those 8 copies from the staged buffers with no read.
		REQUIRE(kvgpu_prefetch(c.c, 8, kp.data()) == 8);
		REQUIRE(kvgpu_wait(c.c, 0) == 0);  // every job so far, the prefetch reads included
		double t3 = now_s();
		int64_t b2 = kvgpu_load_batch(c.c, 8, kp.data(), dp.data(), sz.data(), res.data(),
					      nullptr);
		REQUIRE(kvgpu_batch_wait(c.c, b2) == 0);
		f.staged8_ms.add((now_s() - t3) * 1e3);
	}
	f.max_io = stats_of(c.c).max_io_in_flight;
	return f;
}

struct Evicts {
	Samples put_us[2], put_gbps[2];  // [KVGPU_RECLAIM_BACKGROUND], [KVGPU_RECLAIM_INLINE]
	Samples raw_write_gbps, unlink_us, punch_us, segment_us;
};

// A store full from the start (every put evicts one chunk), each put waited for: how long the
// kvgpu_evict call itself takes (reservation and eviction in the caller's thread), with the
// victims unlinked by the reclaimer (BACKGROUND) or in the call (INLINE), and the bandwidth.
void put_latency(const std::string &dir, uint32_t reclaim, Evicts &f)
{
	constexpr unsigned kHeld = 16, kPuts = 64;
	std::vector<unsigned char> src = pattern(kChunk, 9);
	TempDir d(dir);
	kvgpu_options o = engine_options(KVGPU_ENGINE_HOST);
	o.capacity_bytes = kHeld * file_bytes(kChunk);
	o.reclaim = reclaim;
	Ctx c(d.path, o);
	REQUIRE(c.rc == 0);
	for (unsigned i = 0; i < kHeld; i++)
		REQUIRE(kvgpu_wait(c.c, kvgpu_evict(c.c, src.data(), kChunk,
						    ("fill/" + std::to_string(i)).c_str(), 2,
						    nullptr)) == 0);
	Samples call_us;
	double t0 = now_s();
	for (unsigned i = 0; i < kPuts; i++) {
		double t1 = now_s();
		int64_t t = kvgpu_evict(c.c, src.data(), kChunk,
					("put/" + std::to_string(i)).c_str(), 2, nullptr);
		call_us.add((now_s() - t1) * 1e6);
		REQUIRE(kvgpu_wait(c.c, t) == 0);
	}
	f.put_gbps[reclaim].add(gbps(kPuts * kChunk, now_s() - t0));
	f.put_us[reclaim].add(call_us.median());
	REQUIRE(stats_of(c.c).evictions == kPuts);
}

// Raw O_DIRECT writes of 64 files, and the cost of one eviction: unlinking a written 4 MiB file,
// punching 4 MiB out of a 256 MiB segment file, or 1/64 of that segment's unlink.
void raw_evict_figures(const std::string &dir, Evicts &f)
{
	constexpr unsigned kPuts = 64;
	TempDir d(dir);
	double raw = bench::raw_files(d.path, kChunk, kPuts, 4u << 20, 8, true, false);
	REQUIRE(raw > 0);
	f.raw_write_gbps.add(raw / 1e9);
	double t1 = now_s();
	bench::remove_raw_files(d.path, kPuts);
	f.unlink_us.add((now_s() - t1) * 1e6 / kPuts);
	REQUIRE(bench::raw_files(d.path, kPuts * kChunk - kBlock, 1, 4u << 20, 8, true, false) > 0);
	int fd = ::open((d.path + "/raw-0").c_str(), O_RDWR);
	REQUIRE(fd >= 0);
	double t2 = now_s();
	for (unsigned i = 0; i < kPuts; i++)
		REQUIRE(::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				    off_t(i * kChunk), off_t(kChunk)) == 0);
	f.punch_us.add((now_s() - t2) * 1e6 / kPuts);
	::close(fd);
	bench::remove_raw_files(d.path, 1);
	REQUIRE(bench::raw_files(d.path, kPuts * kChunk - kBlock, 1, 4u << 20, 8, true, false) > 0);
	double t3 = now_s();
	bench::remove_raw_files(d.path, 1);
	f.segment_us.add((now_s() - t3) * 1e6 / kPuts);
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
		Ctx c(d.path, o);
		REQUIRE(c.rc == 0);
		unsigned char byte = 7;
		double t0 = now_s();
		for (uint64_t i = 0; i < n; i++)
			REQUIRE(kvgpu_evict(c.c, &byte, 1, ("r/" + std::to_string(i)).c_str(), 2,
					    nullptr) > 0);
		REQUIRE(kvgpu_wait(c.c, 0) == 0);
		r.fill_s = now_s() - t0;
	}
	for (int i = 0; i < 3; i++) {
		Ctx c(d.path, o);
		REQUIRE(c.rc == 0);
		kvgpu_stats_t s = stats_of(c.c);
		REQUIRE(s.chunks == n);
		r.open_ms = std::min(r.open_ms, double(s.open_ns) / 1e6);
	}
	{
		int fd = ::open((d.path + "/" + kIndexName).c_str(), O_RDWR);
		REQUIRE(fd >= 0);
		char b = 0;
		REQUIRE(::pread(fd, &b, 1, 100) == 1);
		b ^= 1;
		REQUIRE(::pwrite(fd, &b, 1, 100) == 1);
		::close(fd);
		Ctx c(d.path, o);
		REQUIRE(c.rc == 0);
		kvgpu_stats_t s = stats_of(c.c);
		CHECK(s.index_error == KVGPU_ERR_INDEX);
		r.rebuilt_chunks = s.chunks;
		r.rebuild_ms = double(s.open_ns) / 1e6;
	}
	return r;
}

// KVGPU_BENCH_LOAD_KIB: the chunk sizes of the load figures, e.g. "64,256,4096" (default 256,4096).
std::vector<uint64_t> load_sizes()
{
	std::vector<uint64_t> v;
	const char *e = std::getenv("KVGPU_BENCH_LOAD_KIB");
	std::string s = e && *e ? e : "256,4096";
	for (size_t at = 0; at < s.size();) {
		size_t end = s.find(',', at);
		end = end == std::string::npos ? s.size() : end;
		if (uint64_t kib = std::strtoull(s.substr(at, end - at).c_str(), nullptr, 10);
		    kib > 0)
			v.push_back(kib << 10);
		at = end + 1;
	}
	return v;
}

}  // namespace

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
		// 256 KiB: where a load's latency rather than bandwidth counts; 4 MiB: the goal's size.
		for (uint64_t chunk : load_sizes()) {
			Loads f = load_figures(d.path, chunk, reps);
			double batch_gbps = gbps(kBatch * chunk, f.batch_ms.median() / 1e3);
			double raw_gbps = gbps(kBatch * chunk, f.raw_qdn_ms.median() / 1e3);
			std::printf(
				"%-8s %-6s 32 x %4llu KiB loads (median of %u; O_DIRECT %d): sequential %.2f ms "
				"[%.2f-%.2f], batch %.2f ms [%.2f-%.2f] = %.2fx; raw O_DIRECT read of the same files "
				"QD1 %.2f ms, QD%u %.2f ms (QD%u/QD1 %.2fx); batch %.2f GB/s / raw QD%u %.2f GB/s = %.2f; "
				"max %llu reads in flight; 8 prefetched %.2f ms; verified %d\n",
				t.name.c_str(), fs_name(t.dir).c_str(),
				static_cast<unsigned long long>(chunk >> 10), reps, f.direct,
				f.seq_ms.median(), f.seq_ms.min(), f.seq_ms.max(),
				f.batch_ms.median(), f.batch_ms.min(), f.batch_ms.max(),
				f.seq_ms.median() / f.batch_ms.median(), f.raw_qd1_ms.median(),
				f.depth, f.raw_qdn_ms.median(), f.depth,
				f.raw_qd1_ms.median() / f.raw_qdn_ms.median(), batch_gbps, f.depth,
				raw_gbps, batch_gbps / raw_gbps,
				static_cast<unsigned long long>(f.max_io), f.staged8_ms.median(),
				f.verified ? 1 : 0);
			std::fflush(stdout);
			CHECK(f.verified);
			j["targets"][t.name]["fs"] = fs_name(t.dir);
			j["targets"][t.name]["loads"][std::to_string(chunk >> 10) + "k"] = {
				{"direct_io", f.direct},
				{"sequential_ms", f.seq_ms.json()},
				{"batch_ms", f.batch_ms.json()},
				{"raw_qd1_ms", f.raw_qd1_ms.json()},
				{"raw_qd_slots_ms", f.raw_qdn_ms.json()},
				{"slots", f.depth},
				{"batch_speedup", f.seq_ms.median() / f.batch_ms.median()},
				{"batch_gbps", batch_gbps},
				{"raw_read_gbps", raw_gbps},
				{"batch_over_raw_read", batch_gbps / raw_gbps},
				{"prefetched_8_ms", f.staged8_ms.json()},
				{"max_io_in_flight", f.max_io}};
		}
		Evicts e;
		for (unsigned r = 0; r < reps; r++) {
			for (uint32_t reclaim :
			     {uint32_t(KVGPU_RECLAIM_BACKGROUND), uint32_t(KVGPU_RECLAIM_INLINE)})
				put_latency(d.path, r % 2 ? 1 - reclaim : reclaim, e);
			raw_evict_figures(d.path, e);
		}
		std::printf(
			"%-8s %-6s 64 puts of 4 MiB into a full store (median of %u): kvgpu_evict call %.0f us with "
			"background reclaim [%.0f-%.0f], %.0f us with inline unlinks [%.0f-%.0f]; put+wait %.2f / %.2f "
			"GB/s; raw O_DIRECT write %.2f GB/s; one eviction: unlink %.0f us, punch hole %.0f us, 1/64 of "
			"a segment's unlink %.0f us\n",
			t.name.c_str(), fs_name(t.dir).c_str(), reps, e.put_us[0].median(),
			e.put_us[0].min(), e.put_us[0].max(), e.put_us[1].median(),
			e.put_us[1].min(), e.put_us[1].max(), e.put_gbps[0].median(),
			e.put_gbps[1].median(), e.raw_write_gbps.median(), e.unlink_us.median(),
			e.punch_us.median(), e.segment_us.median());
		std::fflush(stdout);
		j["targets"][t.name]["evicts"] = {
			{"put_call_us_background", e.put_us[0].json()},
			{"put_call_us_inline", e.put_us[1].json()},
			{"put_wait_gbps_background", e.put_gbps[0].json()},
			{"put_wait_gbps_inline", e.put_gbps[1].json()},
			{"raw_write_gbps", e.raw_write_gbps.json()},
			{"unlink_us", e.unlink_us.json()},
			{"punch_hole_us", e.punch_us.json()},
			{"segment_unlink_per_chunk_us", e.segment_us.json()}};
	}
	uint64_t n = bench::env_u64("KVGPU_BENCH_RESTART_CHUNKS", 100000);
	Restart r = restart_figures(targets.front().dir, n);
	std::printf(
		"restart of a %llu-chunk store in %s: open %.0f ms (journal replay + readdir); after a corrupt "
		"journal %.0f ms (rebuilt from %llu headers); filling it took %.1f s\n",
		static_cast<unsigned long long>(r.chunks), targets.front().dir.c_str(), r.open_ms,
		r.rebuild_ms, static_cast<unsigned long long>(r.rebuilt_chunks), r.fill_s);
	CHECK(r.rebuilt_chunks == n);
	j["restart"] = {{"chunks", r.chunks},
			{"dir", targets.front().dir},
			{"open_ms", r.open_ms},
			{"rebuild_ms", r.rebuild_ms},
			{"fill_s", r.fill_s}};
	const char *path = std::getenv("KVGPU_BENCH_JSON");
	std::ofstream(path && *path ? path : "bench_kvgpu_store.json") << j.dump(2) << "\n";
}
