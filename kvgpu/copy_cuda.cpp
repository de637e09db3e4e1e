// The CUDA copy engine: cudaMemcpyAsync on a dedicated stream, a cudaEvent per staging slot,
// and a host function after each copy that wakes the worker's io_uring through the eventfd.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <new>
#include <utility>
#include <unistd.h>
#include <vector>

#include "kvgpu/copy_engine.hpp"
#include "kvgpu/kvgpu.h"

namespace kvfdp::gpu {
namespace {

void CUDART_CB wake_worker(void *arg)
{
	// Runs on a CUDA driver thread: no CUDA calls allowed here, only the eventfd write.
	uint64_t one = 1;
	(void)!::write(static_cast<int>(reinterpret_cast<intptr_t>(arg)), &one, sizeof(one));
}

// Makes device current on this thread for the guard's scope, then restores the caller's own
// device: calls on the caller's thread leave its CUDA state as they found it.
class DeviceGuard {
public:
	explicit DeviceGuard(int device)
	{
		ok_ = cudaGetDevice(&prev_) == cudaSuccess;
		if (ok_ && prev_ != device) {
			ok_ = cudaSetDevice(device) == cudaSuccess;
			switched_ = ok_;
		}
	}
	~DeviceGuard()
	{
		if (switched_)
			cudaSetDevice(prev_);
	}
	DeviceGuard(const DeviceGuard &) = delete;
	DeviceGuard &operator=(const DeviceGuard &) = delete;
	[[nodiscard]] bool ok() const { return ok_; }

private:
	int prev_ = 0;
	bool ok_ = false;
	bool switched_ = false;
};

class CudaEngine final : public CopyEngine {
public:
	CudaEngine(int device, int wake_fd) : device_(device), wake_fd_(wake_fd) {}

	~CudaEngine() override
	{
		DeviceGuard g(device_);
		if (stream_)
			cudaStreamSynchronize(stream_);
		for (cudaEvent_t e : slot_events_)
			cudaEventDestroy(e);
		for (cudaEvent_t e : job_events_)
			cudaEventDestroy(e);
		if (stream_)
			cudaStreamDestroy(stream_);
	}

	int init(unsigned slots, unsigned jobs)
	{
		DeviceGuard g(device_);
		if (!g.ok())
			return KVGPU_ERR_NO_DEVICE;
		if (cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess)
			return KVGPU_ERR_CUDA;
		slot_events_.assign(slots, nullptr);
		job_events_.assign(jobs, nullptr);
		for (cudaEvent_t &e : slot_events_)
			if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess)
				return KVGPU_ERR_CUDA;
		for (cudaEvent_t &e : job_events_)
			if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess)
				return KVGPU_ERR_CUDA;
		return 0;
	}

	int kind() const override { return KVGPU_ENGINE_CUDA; }

	int alloc_staging(size_t bytes, void **out) override
	{
		// cudaHostAlloc memory is page-aligned, which O_DIRECT needs.
		DeviceGuard g(device_);
		if (!g.ok())
			return KVGPU_ERR_CUDA;
		return cudaHostAlloc(out, bytes, cudaHostAllocPortable) == cudaSuccess
			       ? 0
			       : KVGPU_ERR_NOMEM;
	}

	void free_staging(void *p) override
	{
		DeviceGuard g(device_);
		cudaFreeHost(p);
	}

	int mark_source(unsigned job, void *stream) override
	{
		DeviceGuard g(device_);
		if (!g.ok())
			return KVGPU_ERR_CUDA;
		cudaError_t e =
			cudaEventRecord(job_events_[job], static_cast<cudaStream_t>(stream));
		return e == cudaSuccess ? 0 : KVGPU_ERR_CUDA;
	}

	int order_after(unsigned job) override
	{
		return cudaStreamWaitEvent(stream_, job_events_[job], 0) == cudaSuccess
			       ? 0
			       : KVGPU_ERR_CUDA;
	}

	int copy(unsigned slot, void *dst, const void *src, size_t n) override
	{
		// cudaMemcpyDefault: unified addressing tells device from host pointers.
		if (cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, stream_) != cudaSuccess)
			return KVGPU_ERR_CUDA;
		if (cudaEventRecord(slot_events_[slot], stream_) != cudaSuccess)
			return KVGPU_ERR_CUDA;
		void *arg = reinterpret_cast<void *>(static_cast<intptr_t>(wake_fd_));
		return cudaLaunchHostFunc(stream_, wake_worker, arg) == cudaSuccess
			       ? 0
			       : KVGPU_ERR_CUDA;
	}

	int query(unsigned slot) override
	{
		cudaError_t e = cudaEventQuery(slot_events_[slot]);
		if (e == cudaSuccess)
			return 1;
		if (e == cudaErrorNotReady)
			return 0;
		return KVGPU_ERR_CUDA;
	}

	int bind_thread() override
	{
		return cudaSetDevice(device_) == cudaSuccess ? 0 : KVGPU_ERR_CUDA;
	}

private:
	int device_;
	int wake_fd_;
	cudaStream_t stream_ = nullptr;
	std::vector<cudaEvent_t> slot_events_;
	std::vector<cudaEvent_t> job_events_;
};

}  // namespace

int cuda_device_count()
{
	int n = 0;
	// No driver, no device, or a driver too old for the runtime all mean: no usable GPU.
	if (cudaGetDeviceCount(&n) != cudaSuccess)
		return 0;
	return n;
}

int make_cuda_engine(int device, unsigned slots, unsigned jobs, int wake_fd,
		     std::unique_ptr<CopyEngine> *out)
{
	int count = cuda_device_count();
	if (count <= 0 || device < 0 || device >= count)
		return KVGPU_ERR_NO_DEVICE;
	std::unique_ptr<CudaEngine> e(new (std::nothrow) CudaEngine(device, wake_fd));
	if (!e)
		return KVGPU_ERR_NOMEM;
	if (int rc = e->init(slots, jobs); rc < 0)
		return rc;
	*out = std::move(e);
	return 0;
}

}  // namespace kvfdp::gpu
