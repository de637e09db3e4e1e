// Bench (host path): evict and load bandwidth to tmpfs, a loop-device ext4 (root) and the ext4
// under /var/tmp, against memcpy and raw O_DIRECT file bandwidth; prints and writes JSON.
// KVGPU_BENCH_JSON=path (default bench_kvgpu_host.json in the working directory),
// KVGPU_BENCH_MIB=n (bytes per chunk size, default 256 MiB), KVGPU_BENCH_REPS=n (default 3),
// KVGPU_BENCH_SLOT_KIB / KVGPU_BENCH_SLOTS (staging ring, default 4096 KiB x 8),
// KVGPU_BENCH_ONLY=name (one target).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "kvgpu/kvgpu.h"
#include "tests/bpf/test_disk.hpp"
#include "tests/kvgpu/kvgpu_bench.hpp"
#include "tests/kvgpu/kvgpu_test_util.hpp"

using namespace kvfdp::gpu;

namespace {

struct FreeDeleter {
	void operator()(void *p) const { std::free(p); }
};
using HostBuf = std::unique_ptr<char, FreeDeleter>;

HostBuf host_alloc(uint64_t n)
{
	return HostBuf(static_cast<char *>(std::aligned_alloc(kBlock, align_up(n))));
}

}  // namespace

TEST_CASE("kvgpu bench: host-path evict and load bandwidth vs memcpy and raw O_DIRECT files")
{
	bench::Setup set = bench::env_setup(KVGPU_ENGINE_HOST, 256, "bench_kvgpu_host.json");
	const uint64_t total = set.total;
	const kvgpu_options &o = set.options;

	HostBuf src = host_alloc(total), dst = host_alloc(total),
		ring = host_alloc(uint64_t(o.slots) * o.slot_bytes);
	REQUIRE(src);
	REQUIRE(dst);
	REQUIRE(ring);
	test::fill_pattern(src.get(), total, 42);
	std::memset(dst.get(), 0, total);  // fault the pages in before any timing
	std::memset(ring.get(), 0, size_t(o.slots) * o.slot_bytes);

	bench::Buffers buf;
	buf.src = src.get();
	buf.dst = dst.get();
	// The host engine's copy: memcpy of slot-sized pieces into a ring of staging slots.
	buf.copy_bw = [&](uint64_t n, unsigned piece) {
		double t0 = bench::now_s();
		for (uint64_t off = 0, i = 0; off < n; off += piece, i++)
			std::memcpy(ring.get() + (i % o.slots) * piece, src.get() + off,
				    std::min<uint64_t>(piece, n - off));
		return bench::gbps(n, bench::now_s() - t0) * 1e9;
	};
	buf.same = [&](uint64_t off, uint64_t n) {
		return std::memcmp(src.get() + off, dst.get() + off, n) == 0;
	};

	std::vector<std::string> skipped;
	std::vector<bench::Target> targets;
	test::TempDir shm("/dev/shm");
	if (shm.ok() && test::fs_name(shm.path) == "tmpfs")
		targets.push_back({"tmpfs", shm.path});
	else
		skipped.push_back("tmpfs: /dev/shm is not a writable tmpfs");

	// A loop-device ext4 (the backing file lives in /var/tmp's page cache).
	std::unique_ptr<kvfdp::test::ScratchFs> loop;
	if (::geteuid() != 0)
		skipped.push_back("ext4-loop: creating a loop device needs root");
	else if (
		kvfdp::test::run_cmd(
			"command -v losetup >/dev/null 2>&1 && command -v mkfs.ext4 >/dev/null 2>&1") !=
		0)
		skipped.push_back("ext4-loop: losetup or mkfs.ext4 is not installed");
	else {
		loop = std::make_unique<kvfdp::test::ScratchFs>(
			"ext4", unsigned(std::max<uint64_t>(total >> 20, 64) * 3 + 128));
		if (loop->ok())
			targets.push_back({"ext4-loop", loop->mnt()});
		else
			skipped.push_back("ext4-loop: " + loop->why());
	}

	// The filesystem /var/tmp is on (this machine's disk).
	test::TempDir disk("/var/tmp");
	if (disk.ok())
		targets.push_back({"var-tmp", disk.path});
	else
		skipped.push_back("var-tmp: cannot create a directory in /var/tmp");

	for (const auto &s : skipped)
		MESSAGE("not measured: " << s);
	REQUIRE(!targets.empty());

	std::printf(
		"kvgpu host bench: %llu MiB per chunk size, best of %u, %u x %u KiB staging slots, %ld CPUs online\n",
		static_cast<unsigned long long>(total >> 20), set.reps, o.slots, o.slot_bytes >> 10,
		::sysconf(_SC_NPROCESSORS_ONLN));
	auto results =
		bench::run_matrix(targets, set.sizes, total, set.reps, o, buf, test::fs_name);

	std::ofstream(set.json_path)
		<< bench::report("kvgpu_host", o, total, set.reps, results, skipped).dump(2)
		<< "\n";
	MESSAGE("wrote " << set.json_path);
	for (const auto &r : results) {
		CHECK_MESSAGE(r.error.empty(), r.target << " " << r.chunk << ": " << r.error);
		CHECK_MESSAGE(r.verified, r.target
						  << " " << r.chunk
						  << ": loaded bytes differ from the evicted ones");
		CHECK(r.evict > 0);
		CHECK(r.load > 0);
	}
}
