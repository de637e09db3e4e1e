// The bounded store on the CUDA engine with device memory: evicts under a capacity, batched
// loads and prefetched loads into device buffers, each checked on the host; the batch and
// sequential times are printed (figures, not asserted). Skips (77) with the reason when
// libkvgpu was built without CUDA or no NVIDIA GPU is on the PCI bus.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "kvgpu/chunk_format.hpp"
#include "kvgpu/kvgpu.h"
#include "tests/kvgpu/kvgpu_store_util.hpp"
#include "tests/support/skip.hpp"

#ifdef KVGPU_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace kvfdp::gpu;
using namespace kvfdp::gpu::test;

#ifndef KVGPU_WITH_CUDA

static const kvfdp::test::Requires need_cuda("cuda", [] {
	return std::string("libkvgpu was built without CUDA (no nvcc at configure time)");
});

TEST_CASE("kvgpu store gpu: the bounded store on device memory")
{
	CHECK(kvgpu_has_cuda() == 0);
}

#else

static const kvfdp::test::Requires need_gpu("gpu", kvfdp::test::probe_gpu());

namespace {

constexpr size_t kChunk = (4u << 20) - 100;
constexpr unsigned kN = 32;

// kN device buffers of kChunk bytes.
struct DevBufs {
	std::vector<void *> p;
	DevBufs()
	{
		p.assign(kN, nullptr);
		for (void *&x : p)
			REQUIRE(cudaMalloc(&x, kChunk) == cudaSuccess);
	}
	~DevBufs()
	{
		for (void *x : p)
			cudaFree(x);
	}
	DevBufs(const DevBufs &) = delete;
	DevBufs &operator=(const DevBufs &) = delete;
	[[nodiscard]] bool holds(unsigned i, const std::string &key) const
	{
		std::vector<unsigned char> back(kChunk);
		REQUIRE(cudaMemcpy(back.data(), p[i], kChunk, cudaMemcpyDeviceToHost) ==
			cudaSuccess);
		return back == key_payload(key, kChunk);
	}
};

double ms_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
		.count();
}

}  // namespace

TEST_CASE(
	"kvgpu store gpu: evicts from device memory under a capacity, batched and prefetched loads into it")
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	bool usable = e == cudaSuccess && n > 0;
	REQUIRE_MESSAGE(usable,
			"a GPU is on the PCI bus but CUDA cannot use it: " << cudaGetErrorName(e));
	TempDir dir;
	REQUIRE(dir.ok());
	kvgpu_options o = engine_options(KVGPU_ENGINE_CUDA);
	o.capacity_bytes = (kN + 8) * file_bytes(kChunk);
	Ctx c(dir.path, o);
	REQUIRE_MESSAGE(c.rc == 0, kvgpu_strerror(c.rc));
	CHECK(stats_of(c.c).engine == KVGPU_ENGINE_CUDA);
	DevBufs src, dst;
	std::vector<std::string> keys(kN + 8);
	for (unsigned i = 0; i < kN + 8; i++) {
		keys[i] = "gpu/" + std::to_string(i);
		auto v = key_payload(keys[i], kChunk);
		REQUIRE(cudaMemcpy(src.p[i % kN], v.data(), kChunk, cudaMemcpyHostToDevice) ==
			cudaSuccess);
		int64_t t = kvgpu_evict(c.c, src.p[i % kN], kChunk, keys[i].c_str(),
					KVGPU_LIFETIME_SHORT, nullptr);
		REQUIRE(t > 0);
		REQUIRE(kvgpu_wait(c.c, t) == 0);
	}
	// Full after kN + 8; eight more push the first eight out (FIFO).
	for (unsigned i = 0; i < 8; i++) {
		std::string k = "more/" + std::to_string(i);
		auto v = key_payload(k, kChunk);
		REQUIRE(cudaMemcpy(src.p[0], v.data(), kChunk, cudaMemcpyHostToDevice) ==
			cudaSuccess);
		REQUIRE(kvgpu_wait(c.c,
				   kvgpu_evict(c.c, src.p[0], kChunk, k.c_str(), 2, nullptr)) == 0);
	}
	kvgpu_stats_t s = stats_of(c.c);
	CHECK(s.evictions == 8);
	CHECK(s.used_bytes <= o.capacity_bytes);
	CHECK(kvgpu_contains(c.c, keys[0].c_str()) == 0);

	std::vector<const char *> kp(kN);
	std::vector<size_t> sz(kN, kChunk);
	std::vector<int64_t> res(kN);
	for (unsigned i = 0; i < kN; i++)
		kp[i] = keys[8 + i].c_str();
	auto t0 = std::chrono::steady_clock::now();
	for (unsigned i = 0; i < kN; i++)
		REQUIRE(kvgpu_load(c.c, kp[i], dst.p[i], kChunk, nullptr) == int64_t(kChunk));
	double seq = ms_since(t0);
	for (unsigned i = 0; i < kN; i++)
		CHECK(dst.holds(i, keys[8 + i]));
	for (void *x : dst.p)
		REQUIRE(cudaMemset(x, 0, kChunk) == cudaSuccess);
	t0 = std::chrono::steady_clock::now();
	int64_t b =
		kvgpu_load_batch(c.c, kN, kp.data(), dst.p.data(), sz.data(), res.data(), nullptr);
	REQUIRE(b > 0);
	REQUIRE(kvgpu_batch_wait(c.c, b) == 0);
	double batch = ms_since(t0);
	for (unsigned i = 0; i < kN; i++) {
		CHECK(res[i] == int64_t(kChunk));
		CHECK(dst.holds(i, keys[8 + i]));
	}
	MESSAGE("CUDA engine, " << kN << " x " << kChunk << " B into device memory: sequential "
				<< seq << " ms, batch " << batch << " ms (" << seq / batch << "x)");

	// Staged in the pinned prefetch buffers, then copied H2D without a read.
	for (void *x : dst.p)
		REQUIRE(cudaMemset(x, 0, kChunk) == cudaSuccess);
	REQUIRE(kvgpu_prefetch(c.c, 8, kp.data()) == 8);
	int64_t b2 =
		kvgpu_load_batch(c.c, 8, kp.data(), dst.p.data(), sz.data(), res.data(), nullptr);
	REQUIRE(kvgpu_batch_wait(c.c, b2) == 0);
	for (unsigned i = 0; i < 8; i++)
		CHECK(dst.holds(i, keys[8 + i]));
	CHECK(stats_of(c.c).prefetch_hits == 8);
}

#endif
