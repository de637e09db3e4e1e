// The CUDA engine's entry points in a build without CUDA.
#include "kvgpu/copy_engine.hpp"
#include "kvgpu/kvgpu.h"

namespace kvfdp::gpu {

int make_cuda_engine(int, unsigned, unsigned, int, std::unique_ptr<CopyEngine> *)
{
	return KVGPU_ERR_NOT_BUILT;
}

int cuda_device_count()
{
	return KVGPU_ERR_NOT_BUILT;
}

}  // namespace kvfdp::gpu
