// NVMe status to errno, after the kernel's nvme_error_status (NVMe 2.x Fig. 100-104).
#include "userspace/daemon/errno_map.hpp"

#include <cerrno>

namespace kvfdp::daemon {

int device_result_to_errno(int result)
{
	if (result == 0)
		return 0;
	if (result < 0) {
		switch (-result) {
		case ENOSPC: case EOPNOTSUPP: case ENOLINK: case ENODATA: case EILSEQ:
		case EBADE: case EREMOTEIO: case ETIMEDOUT: case EIO:
			return result;
		default:
			return -EIO;
		}
	}
	const int sct_sc = result & 0x7ff;  // drop DNR (bit 14) and More (bit 13)
	switch (sct_sc) {
	case 0x001:  // invalid command opcode
	case 0x002:  // invalid field in command
	case 0x00b:  // invalid namespace or format
	case 0x180:  // conflicting attributes
		return -EOPNOTSUPP;
	case 0x080:  // LBA out of range
		return -EREMOTEIO;
	case 0x081:  // capacity exceeded
		return -ENOSPC;
	case 0x083:  // reservation conflict
		return -EBADE;
	case 0x280:  // write fault
	case 0x281:  // unrecovered read error
	case 0x287:  // deallocated or unwritten logical block
		return -ENODATA;
	case 0x282: case 0x283: case 0x284:  // guard / application tag / reference tag check
		return -EILSEQ;
	default:
		break;
	}
	if ((sct_sc >> 8) == 0x3)  // path related status
		return -ENOLINK;
	return -EIO;
}

} // namespace kvfdp::daemon
