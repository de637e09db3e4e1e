// errno_to_kvgpu: the kvgpu_error a failed system call gives its caller.
#pragma once

namespace kvfdp::gpu {

// Maps a negative (or positive) errno to a kvgpu_error.
[[nodiscard]] int errno_to_kvgpu(int err_no);

}  // namespace kvfdp::gpu
