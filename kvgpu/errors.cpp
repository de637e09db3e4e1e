// errno_to_kvgpu: errno values as kvgpu_error codes.
#include "kvgpu/errors.hpp"

#include <cerrno>

#include "kvgpu/kvgpu.h"

namespace kvfdp::gpu {

int errno_to_kvgpu(int err_no)
{
	switch (err_no < 0 ? -err_no : err_no) {
	case ENOSPC:
	case EDQUOT:
	case EFBIG: return KVGPU_ERR_NO_SPACE;
	case ENOENT: return KVGPU_ERR_NOT_FOUND;
	case EACCES:
	case EPERM:
	case EROFS: return KVGPU_ERR_PERM;
	case ENOMEM: return KVGPU_ERR_NOMEM;
	default: return KVGPU_ERR_IO;
	}
}

}  // namespace kvfdp::gpu
