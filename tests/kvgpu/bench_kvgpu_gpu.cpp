// Bench (GPU): evict and load bandwidth of the CUDA engine from device memory, against the
// measured D2H bandwidth (cudaMemcpyAsync into pinned memory) and raw O_DIRECT file writes;
// the goal is evict >= 90% of min(D2H, file write). Writes JSON. Run by run_gpu_bench.sh.
// KVGPU_BENCH_DIRS="name=dir,..." (default tmpfs=/dev/shm and var-tmp=/var/tmp),
// KVGPU_BENCH_JSON=path, KVGPU_BENCH_MIB (default 1024), KVGPU_BENCH_REPS (default 3),
// KVGPU_BENCH_SLOT_KIB (default 4096), KVGPU_BENCH_SLOTS (default 8), KVGPU_BENCH_DEVICE (0).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "kvgpu/kvgpu.h"
#include "tests/kvgpu/kvgpu_bench.hpp"
#include "tests/kvgpu/kvgpu_test_util.hpp"
#include "tests/support/skip.hpp"

#ifdef KVGPU_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace kvfdp::gpu;

#ifndef KVGPU_WITH_CUDA

static const kvfdp::test::Requires need_cuda("cuda", [] {
	return std::string("libkvgpu was built without CUDA (no nvcc at configure time)");
});

TEST_CASE("kvgpu gpu bench: CUDA engine bandwidth")
{
	CHECK(kvgpu_has_cuda() == 0);
}

#else

namespace {

// The capability is an NVIDIA GPU on the PCI bus, decided before any check. With one there, a
// CUDA error (a driver too old for this build, no libcuda.so.1) fails the bench.
const kvfdp::test::Requires need_gpu("gpu", kvfdp::test::probe_gpu());

constexpr uint64_t kVerifyPiece = 64u << 20;

// Bandwidth of cudaMemcpyAsync of total bytes in piece-sized copies between device memory dev
// and a pinned ring of `slots` pieces, on one non-blocking stream (as the engine does).
double memcpy_bw(char *dev, uint64_t total, unsigned piece, unsigned slots, bool d2h)
{
	void *ring = nullptr;
	if (cudaHostAlloc(&ring, size_t(piece) * slots, cudaHostAllocPortable) != cudaSuccess)
		return 0;
	cudaStream_t s = nullptr;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
		cudaFreeHost(ring);
		return 0;
	}
	auto pass = [&](uint64_t n) {
		for (uint64_t off = 0, i = 0; off < n; off += piece, i++) {
			char *h = static_cast<char *>(ring) + (i % slots) * piece;
			size_t len = size_t(std::min<uint64_t>(piece, n - off));
			if (d2h)
				cudaMemcpyAsync(h, dev + off, len, cudaMemcpyDeviceToHost, s);
			else
				cudaMemcpyAsync(dev + off, h, len, cudaMemcpyHostToDevice, s);
		}
		return cudaStreamSynchronize(s) == cudaSuccess;
	};
	pass(std::min<uint64_t>(total, uint64_t(piece) * slots));  // warm-up
	double t0 = bench::now_s();
	bool ok = pass(total);
	double t1 = bench::now_s();
	cudaStreamDestroy(s);
	cudaFreeHost(ring);
	return ok ? bench::gbps(total, t1 - t0) * 1e9 : 0;
}

}  // namespace

TEST_CASE("kvgpu gpu bench: CUDA engine evict and load bandwidth vs D2H and raw O_DIRECT files")
{
	REQUIRE(kvgpu_has_cuda() == 1);
	int ndev = 0;
	cudaError_t e = cudaGetDeviceCount(&ndev);
	REQUIRE_MESSAGE(
		e == cudaSuccess,
		"a GPU is on the PCI bus but CUDA cannot use it: cudaGetDeviceCount: "
			<< cudaGetErrorName(e) << " (" << cudaGetErrorString(e)
			<< "; is the NVIDIA driver, libcuda.so.1, installed and new enough for this CUDA build?)");
	REQUIRE_MESSAGE(ndev > 0, "a GPU is on the PCI bus but the CUDA driver reports none");
	const int device = int(bench::env_u64("KVGPU_BENCH_DEVICE", 0));
	REQUIRE_MESSAGE(device < ndev,
			"KVGPU_BENCH_DEVICE=" << device << " but there are " << ndev << " GPUs");
	REQUIRE(cudaSetDevice(device) == cudaSuccess);
	cudaDeviceProp prop{};
	REQUIRE(cudaGetDeviceProperties(&prop, device) == cudaSuccess);

	bench::Setup set = bench::env_setup(KVGPU_ENGINE_CUDA, 1024, "bench_kvgpu_gpu.json");
	set.options.cuda_device = device;
	const uint64_t total = set.total;
	const kvgpu_options &o = set.options;

	char *src = nullptr, *dst = nullptr;
	REQUIRE(cudaMalloc(reinterpret_cast<void **>(&src), total) == cudaSuccess);
	REQUIRE(cudaMalloc(reinterpret_cast<void **>(&dst), total) == cudaSuccess);
	{
		std::vector<unsigned char> piece(kVerifyPiece);
		for (uint64_t off = 0; off < total; off += kVerifyPiece) {
			size_t n = size_t(std::min<uint64_t>(kVerifyPiece, total - off));
			test::fill_pattern(piece.data(), n, 1000 + off);
			REQUIRE(cudaMemcpy(src + off, piece.data(), n, cudaMemcpyHostToDevice) ==
				cudaSuccess);
		}
	}
	REQUIRE(cudaMemset(dst, 0, total) == cudaSuccess);

	bench::Buffers buf;
	buf.src = src;
	buf.dst = dst;
	buf.copy_bw = [&](uint64_t n, unsigned piece) {
		return memcpy_bw(src, n, piece, o.slots, true);
	};
	buf.copy_back_bw = [&](uint64_t n, unsigned piece) {
		return memcpy_bw(dst, n, piece, o.slots, false);
	};
	buf.same = [&](uint64_t off, uint64_t n) {
		std::vector<unsigned char> a(kVerifyPiece), b(kVerifyPiece);
		for (uint64_t at = off; at < off + n; at += kVerifyPiece) {
			size_t len = size_t(std::min<uint64_t>(kVerifyPiece, off + n - at));
			if (cudaMemcpy(a.data(), src + at, len, cudaMemcpyDeviceToHost) !=
				    cudaSuccess ||
			    cudaMemcpy(b.data(), dst + at, len, cudaMemcpyDeviceToHost) !=
				    cudaSuccess ||
			    std::memcmp(a.data(), b.data(), len) != 0)
				return false;
		}
		return true;
	};

	std::vector<bench::Target> targets = bench::env_targets("KVGPU_BENCH_DIRS");
	std::vector<std::unique_ptr<test::TempDir>> temps;
	if (targets.empty())
		targets = {{"tmpfs", "/dev/shm"}, {"var-tmp", "/var/tmp"}};
	// Each target gets a fresh subdirectory, removed afterwards.
	std::vector<std::string> skipped;
	std::vector<bench::Target> usable;
	for (const auto &t : targets) {
		temps.push_back(std::make_unique<test::TempDir>(t.dir));
		if (temps.back()->ok())
			usable.push_back({t.name, temps.back()->path});
		else
			skipped.push_back(t.name + ": cannot create a directory in " + t.dir);
	}
	for (const auto &s : skipped)
		MESSAGE("not measured: " << s);
	REQUIRE(!usable.empty());

	std::printf(
		"kvgpu GPU bench on %s: %llu MiB per chunk size, best of %u, %u x %u KiB pinned slots, %ld CPUs\n",
		prop.name, static_cast<unsigned long long>(total >> 20), set.reps, o.slots,
		o.slot_bytes >> 10, ::sysconf(_SC_NPROCESSORS_ONLN));
	auto results = bench::run_matrix(usable, set.sizes, total, set.reps, o, buf, test::fs_name);

	nlohmann::json j = bench::report("kvgpu_gpu", o, total, set.reps, results, skipped);
	j["gpu"] = {
		{"name", prop.name}, {"device", device}, {"memory_mib", prop.totalGlobalMem >> 20}};
	std::ofstream(set.json_path) << j.dump(2) << "\n";
	std::printf("wrote %s\n", set.json_path.c_str());
	cudaFree(src);
	cudaFree(dst);
	for (const auto &r : results) {
		CHECK_MESSAGE(r.error.empty(), r.target << " " << r.chunk << ": " << r.error);
		CHECK_MESSAGE(r.verified, r.target
						  << " " << r.chunk
						  << ": loaded bytes differ from the evicted ones");
		CHECK(r.engine == "cuda");
	}
}

#endif
