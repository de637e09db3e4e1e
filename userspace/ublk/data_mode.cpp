// Choosing the data mode from the driver's features.
#include "userspace/ublk/data_mode.hpp"

namespace kvfdp::ublk {

DataModeChoice choose_data_mode(const Result<uint64_t> &features, std::string_view backend, bool wanted)
{
	DataModeChoice c;
	if (!wanted) {
		c.note = "zero copy is turned off (--no-zero-copy)";
		return c;
	}
	if (backend != "passthru") {
		c.note = "the " + std::string(backend) +
			 " backend works on kvfdpd's own buffers (zero copy needs --backend passthru)";
		return c;
	}
	if (!features) {
		c.note = "this ublk driver answers no GET_FEATURES (" + features.error().message() +
			 "), so it has no UBLK_F_AUTO_BUF_REG (Linux 6.16+)";
		return c;
	}
	if (!(*features & kFlagAutoBufReg)) {
		c.note = "this ublk driver lacks UBLK_F_AUTO_BUF_REG (Linux 6.16+)";
		if (*features & kFlagSupportZeroCopy)
			c.note += "; kvfdpd does not use its per-request buffer registration (UBLK_F_SUPPORT_ZERO_COPY)";
		return c;
	}
	c.mode = DataMode::zero_copy;
	c.add_flags = kFlagAutoBufReg;
	return c;
}

const char *data_mode_name(DataMode m) { return m == DataMode::zero_copy ? "zero-copy" : "copy"; }

} // namespace kvfdp::ublk
