// The copy-engine interface: moves bytes between device (or host) memory and the staging ring.
#pragma once

#include <cstddef>
#include <memory>

namespace kvfdp::gpu {

// One engine per context. mark_source runs on caller threads; every other method runs on
// the context's worker thread only. Copies complete in the order they were enqueued.
// After each copy completes the engine writes 1 to the wake eventfd it was created with.
// Methods return 0 (or 1 from query) on success, a negative kvgpu_error code on failure.
class CopyEngine {
public:
	virtual ~CopyEngine() = default;
	CopyEngine() = default;
	CopyEngine(const CopyEngine &) = delete;
	CopyEngine &operator=(const CopyEngine &) = delete;

	// KVGPU_ENGINE_HOST or KVGPU_ENGINE_CUDA.
	[[nodiscard]] virtual int kind() const = 0;
	// Pinned, 4096-aligned host memory for the staging ring; free with free_staging.
	[[nodiscard]] virtual int alloc_staging(size_t bytes, void **out) = 0;
	virtual void free_staging(void *p) = 0;
	// Caller thread: remembers the point reached by stream, so job's copies start after it.
	[[nodiscard]] virtual int mark_source(unsigned job, void *stream) = 0;
	// Worker: copies enqueued from now on wait for job's mark.
	[[nodiscard]] virtual int order_after(unsigned job) = 0;
	// Worker: enqueues a copy of n bytes for staging slot (either direction).
	[[nodiscard]] virtual int copy(unsigned slot, void *dst, const void *src, size_t n) = 0;
	// Worker: 1 when slot's last copy is complete, 0 while pending, < 0 on failure.
	[[nodiscard]] virtual int query(unsigned slot) = 0;
	// Worker: called once when the worker thread starts (binds the CUDA device).
	[[nodiscard]] virtual int bind_thread() = 0;
};

// memcpy on a copy thread: host memory stands in for device memory.
[[nodiscard]] int make_host_engine(unsigned slots, unsigned jobs, int wake_fd,
				   std::unique_ptr<CopyEngine> *out);

// cudaMemcpyAsync on a dedicated non-blocking stream with a cudaEvent per slot and per job.
// Returns KVGPU_ERR_NOT_BUILT without CUDA, KVGPU_ERR_NO_DEVICE without a usable GPU.
[[nodiscard]] int make_cuda_engine(int device, unsigned slots, unsigned jobs, int wake_fd,
				   std::unique_ptr<CopyEngine> *out);

// Number of CUDA devices (0 without a driver or GPU), or KVGPU_ERR_NOT_BUILT.
[[nodiscard]] int cuda_device_count();

}  // namespace kvfdp::gpu
