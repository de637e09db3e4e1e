// libkvgpu's CUDA engine on a real device: round trips from and to device memory (many sizes,
// unaligned ones too), stream ordering, concurrent evicts, checksums. Skips (77) with the
// reason when libkvgpu was built without CUDA or no GPU is on the PCI bus (a driver CUDA cannot
// use is a failure); the second-device case needs two GPUs (capability gpu2).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kvgpu/chunk_format.hpp"
#include "kvgpu/kvgpu.h"
#include "tests/kvgpu/kvgpu_test_util.hpp"
#include "tests/support/skip.hpp"

#ifdef KVGPU_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace kvfdp::gpu;
using kvfdp::gpu::test::TempDir;

#ifndef KVGPU_WITH_CUDA

static const kvfdp::test::Requires need_cuda("cuda", [] {
	return std::string("libkvgpu was built without CUDA (no nvcc at configure time)");
});

TEST_CASE("kvgpu gpu: the CUDA engine on a real device")
{
	CHECK(kvgpu_has_cuda() == 0);
}

#else

namespace {

// The capability is an NVIDIA GPU on the PCI bus, decided before any check. With one there,
// a CUDA build the driver cannot run (too old a driver, no libcuda.so.1) is a failure.
const kvfdp::test::Requires need_gpu("gpu", kvfdp::test::probe_gpu());

// REQUIREs a usable CUDA device; prints which one runs.
void require_gpu()
{
	static bool checked = false;
	if (checked)
		return;
	REQUIRE(kvgpu_has_cuda() == 1);
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	REQUIRE_MESSAGE(
		e == cudaSuccess,
		"a GPU is on the PCI bus but CUDA cannot use it: cudaGetDeviceCount: "
			<< cudaGetErrorName(e) << " (" << cudaGetErrorString(e)
			<< "; is the NVIDIA driver, libcuda.so.1, installed and new enough for this CUDA build?)");
	REQUIRE_MESSAGE(n > 0, "a GPU is on the PCI bus but the CUDA driver reports none");
	checked = true;
	cudaDeviceProp p{};
	if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
		MESSAGE("GPU 0: " << p.name << ", " << (p.totalGlobalMem >> 20) << " MiB");
}

// Device memory, freed on destruction.
struct DevBuf {
	void *p = nullptr;
	explicit DevBuf(size_t n) { REQUIRE(cudaMalloc(&p, n) == cudaSuccess); }
	~DevBuf() { cudaFree(p); }
	DevBuf(const DevBuf &) = delete;
	DevBuf &operator=(const DevBuf &) = delete;
	[[nodiscard]] char *get() const { return static_cast<char *>(p); }
};

kvgpu_options cuda_options(uint32_t slot_bytes = 0, uint32_t slots = 0)
{
	return test::engine_options(KVGPU_ENGINE_CUDA, slot_bytes, slots);
}

using test::Ctx;

// Evicts host pattern `seed` of n bytes from device memory and loads it into fresh device
// memory; returns true when the bytes copied back to the host match.
bool device_round_trip(kvgpu_ctx *c, size_t n, uint64_t seed, const std::string &key, int lifetime)
{
	auto want = test::pattern(n, seed);
	DevBuf src(n), dst(n);
	REQUIRE(cudaMemcpy(src.get(), want.data(), n, cudaMemcpyHostToDevice) == cudaSuccess);
	REQUIRE(cudaMemset(dst.get(), 0, n) == cudaSuccess);
	int64_t t = kvgpu_evict(c, src.get(), n, key.c_str(), lifetime, nullptr);
	REQUIRE_MESSAGE(t > 0, kvgpu_strerror(int(t)));
	REQUIRE_MESSAGE(kvgpu_wait(c, t) == 0, "evict of " << n << " bytes");
	CHECK(kvgpu_lookup(c, key.c_str()) == int64_t(n));
	int64_t got = kvgpu_load(c, key.c_str(), dst.get(), n, nullptr);
	REQUIRE_MESSAGE(got == int64_t(n),
			"load: " << (got < 0 ? kvgpu_strerror(int(got)) : "short"));
	std::vector<unsigned char> back(n);
	REQUIRE(cudaMemcpy(back.data(), dst.get(), n, cudaMemcpyDeviceToHost) == cudaSuccess);
	return back == want;
}

}  // namespace

TEST_CASE("kvgpu gpu: the CUDA engine is chosen and round-trips many sizes from device memory")
{
	require_gpu();
	TempDir dir;
	REQUIRE(dir.ok());
	// A tiny ring (3 x 64 KiB) makes large chunks cycle through every slot many times.
	for (auto [slot_bytes, slots] : {std::pair<uint32_t, uint32_t>{0, 0}, {64u << 10, 3}}) {
		Ctx c(dir.path, cuda_options(slot_bytes, slots));
		REQUIRE_MESSAGE(c.rc == 0, kvgpu_strerror(c.rc));
		kvgpu_stats_t st{};
		REQUIRE(kvgpu_stats(c.c, &st) == 0);
		CHECK(st.engine == KVGPU_ENGINE_CUDA);
		const size_t sizes[] = {1,
					7,
					4095,
					4096,
					4097,
					65535,
					65536,
					65537,
					(1u << 20) + 3,
					(4u << 20) - 1,
					4u << 20,
					(4u << 20) + 1,
					(9u << 20) + 4321,
					33u << 20};
		uint64_t seed = 1;
		for (size_t n : sizes) {
			std::string key =
				"gpu-" + std::to_string(slot_bytes) + "-" + std::to_string(n);
			int lifetime = int(seed % 6);
			CHECK_MESSAGE(device_round_trip(c.c, n, seed, key, lifetime),
				      n << " bytes");
			seed++;
		}
		REQUIRE(kvgpu_stats(c.c, &st) == 0);
		CHECK(st.evicts == std::size(sizes));
		CHECK(st.loads == std::size(sizes));
		CHECK(st.evict_errors == 0);
	}
}

TEST_CASE("kvgpu gpu: an evict starts after the work queued on the caller's stream")
{
	require_gpu();
	TempDir dir;
	REQUIRE(dir.ok());
	Ctx c(dir.path, cuda_options());
	REQUIRE(c.rc == 0);
	constexpr size_t kN = (8u << 20) + 100;
	DevBuf src(kN), dst(kN);
	cudaStream_t s = nullptr;
	REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
	REQUIRE(cudaMemset(src.get(), 0x11, kN) == cudaSuccess);
	// Queued, not finished, when kvgpu_evict is called: the chunk must hold 0xA7 everywhere.
	REQUIRE(cudaMemsetAsync(src.get(), 0xA7, kN, s) == cudaSuccess);
	int64_t t = kvgpu_evict(c.c, src.get(), kN, "ordered", KVGPU_LIFETIME_MEDIUM, s);
	REQUIRE(t > 0);
	REQUIRE(kvgpu_wait(c.c, t) == 0);
	REQUIRE(kvgpu_load(c.c, "ordered", dst.get(), kN, s) == int64_t(kN));
	std::vector<unsigned char> back(kN);
	REQUIRE(cudaMemcpy(back.data(), dst.get(), kN, cudaMemcpyDeviceToHost) == cudaSuccess);
	CHECK(std::count(back.begin(), back.end(), 0xA7) == long(kN));
	REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("kvgpu gpu: concurrent evicts from four threads land intact")
{
	require_gpu();
	TempDir dir;
	REQUIRE(dir.ok());
	Ctx c(dir.path, cuda_options(1u << 20, 6));
	REQUIRE(c.rc == 0);
	constexpr int kThreads = 4, kPer = 8;
	auto len = [](int th, int i) {
		return size_t(1u << 20) * (1 + (th + i) % 3) + size_t(th * 977 + i * 13);
	};
	std::vector<std::thread> ts;
	std::vector<int> failures(kThreads, 0);
	for (int th = 0; th < kThreads; th++)
		ts.emplace_back([&, th] {
			// Each thread binds the device for its own cudaMemcpy calls.
			if (cudaSetDevice(0) != cudaSuccess) {
				failures[th] = kPer;
				return;
			}
			std::vector<void *> bufs;
			std::vector<int64_t> tickets;
			for (int i = 0; i < kPer; i++) {
				size_t n = len(th, i);
				auto v = test::pattern(n, uint64_t(th * 100 + i));
				void *d = nullptr;
				if (cudaMalloc(&d, n) != cudaSuccess ||
				    cudaMemcpy(d, v.data(), n, cudaMemcpyHostToDevice) !=
					    cudaSuccess) {
					failures[th]++;
					continue;
				}
				bufs.push_back(d);
				std::string key =
					"t" + std::to_string(th) + "-" + std::to_string(i);
				tickets.push_back(kvgpu_evict(c.c, d, n, key.c_str(),
							      1 + (th + i) % 5, nullptr));
			}
			for (int64_t t : tickets)
				failures[th] += t <= 0 || kvgpu_wait(c.c, t) != 0;
			for (void *d : bufs)
				cudaFree(d);
		});
	for (auto &t : ts)
		t.join();
	for (int th = 0; th < kThreads; th++)
		CHECK_MESSAGE(failures[th] == 0, "thread " << th);
	for (int th = 0; th < kThreads; th++)
		for (int i = 0; i < kPer; i++) {
			size_t n = len(th, i);
			auto want = test::pattern(n, uint64_t(th * 100 + i));
			DevBuf dst(n);
			std::string key = "t" + std::to_string(th) + "-" + std::to_string(i);
			REQUIRE(kvgpu_load(c.c, key.c_str(), dst.get(), n, nullptr) == int64_t(n));
			std::vector<unsigned char> back(n);
			REQUIRE(cudaMemcpy(back.data(), dst.get(), n, cudaMemcpyDeviceToHost) ==
				cudaSuccess);
			CHECK_MESSAGE(back == want, key);
		}
	kvgpu_stats_t st{};
	REQUIRE(kvgpu_stats(c.c, &st) == 0);
	CHECK(st.evicts == uint64_t(kThreads * kPer));
	MESSAGE("most copies in flight " << st.max_copies_in_flight << ", most I/O in flight "
					 << st.max_io_in_flight);
}

TEST_CASE("kvgpu gpu: a damaged payload fails its checksum on load; host memory works too")
{
	require_gpu();
	TempDir dir;
	REQUIRE(dir.ok());
	Ctx c(dir.path, cuda_options());
	REQUIRE(c.rc == 0);
	constexpr size_t kN = (3u << 20) + 5;
	REQUIRE(device_round_trip(c.c, kN, 99, "crc", KVGPU_LIFETIME_LONG));
	// Flip one payload byte on disk behind the store's back.
	std::string path = dir.path + "/" + key_to_name("crc");
	int fd = ::open(path.c_str(), O_RDWR);
	REQUIRE(fd >= 0);
	unsigned char b = 0;
	REQUIRE(::pread(fd, &b, 1, off_t(kDataOffset + 12345)) == 1);
	b ^= 0xFF;
	REQUIRE(::pwrite(fd, &b, 1, off_t(kDataOffset + 12345)) == 1);
	::close(fd);
	DevBuf dst(kN);
	CHECK(kvgpu_load(c.c, "crc", dst.get(), kN, nullptr) == KVGPU_ERR_CHECKSUM);
	kvgpu_stats_t st{};
	REQUIRE(kvgpu_stats(c.c, &st) == 0);
	CHECK(st.checksum_failures == 1);

	// Pageable host memory through the CUDA engine (cudaMemcpyDefault tells them apart).
	auto v = test::pattern(kN, 7);
	std::vector<unsigned char> back(kN, 0);
	int64_t t = kvgpu_evict(c.c, v.data(), kN, "host-mem", KVGPU_LIFETIME_SHORT, nullptr);
	REQUIRE(t > 0);
	REQUIRE(kvgpu_wait(c.c, t) == 0);
	REQUIRE(kvgpu_load(c.c, "host-mem", back.data(), kN, nullptr) == int64_t(kN));
	CHECK(back == v);
}

// Two GPUs on the PCI bus, decided when the case is registered: with one, the case does not
// run and the executable exits 77 "SKIP: gpu2: ..." only if every other case passed.
TEST_CASE("kvgpu gpu: a store on another device leaves the caller's current device alone" *
	  kvfdp::test::case_requires("gpu2", kvfdp::test::probe_gpus(2)))
{
	require_gpu();
	int n = 0;
	REQUIRE(cudaGetDeviceCount(&n) == cudaSuccess);
	REQUIRE_MESSAGE(n >= 2, "two NVIDIA GPUs are on the PCI bus but CUDA reports "
					<< n << " (CUDA_VISIBLE_DEVICES?)");
	TempDir dir;
	REQUIRE(dir.ok());
	REQUIRE(cudaSetDevice(0) == cudaSuccess);
	kvgpu_options o = cuda_options();
	o.cuda_device = 1;
	Ctx c(dir.path, o);
	REQUIRE(c.rc == 0);
	int cur = -1;
	CHECK((cudaGetDevice(&cur) == cudaSuccess && cur == 0));
	constexpr size_t kN = (2u << 20) + 3;
	void *src = nullptr;
	REQUIRE(cudaSetDevice(1) == cudaSuccess);
	REQUIRE(cudaMalloc(&src, kN) == cudaSuccess);
	REQUIRE(cudaMemset(src, 0x3c, kN) == cudaSuccess);
	REQUIRE(cudaSetDevice(0) == cudaSuccess);
	int64_t t = kvgpu_evict(c.c, src, kN, "dev1", KVGPU_LIFETIME_SHORT, nullptr);
	REQUIRE(t > 0);
	CHECK(kvgpu_wait(c.c, t) == 0);
	CHECK((cudaGetDevice(&cur) == cudaSuccess && cur == 0));
	std::vector<unsigned char> back(kN, 0);
	CHECK(kvgpu_load(c.c, "dev1", back.data(), kN, nullptr) == int64_t(kN));
	CHECK(std::count(back.begin(), back.end(), 0x3c) == long(kN));
	CHECK((cudaGetDevice(&cur) == cudaSuccess && cur == 0));
	cudaFree(src);
}

#endif
