// Choosing the data mode from the driver's features.
#include "kvfdpd/ublk/data_mode.hpp"

namespace kvfdp::ublk {

DataModeChoice choose_data_mode(const Result<uint64_t> &features, std::string_view backend,
				bool wanted, bool prefer_register)
{
	DataModeChoice c;
	if (!wanted) {
		c.note = "zero copy is turned off (--no-zero-copy)";
		return c;
	}
	if (backend != "passthru") {
		c.note =
			"the " + std::string(backend) +
			" backend works on kvfdpd's own buffers (zero copy needs --backend passthru)";
		return c;
	}
	if (!features) {
		c.note = "this ublk driver answers no GET_FEATURES (" + features.error().message() +
			 "), so it has no UBLK_F_AUTO_BUF_REG (Linux 6.16+)";
		return c;
	}
	const bool has_auto = *features & kFlagAutoBufReg;
	const bool has_reg = *features & kFlagSupportZeroCopy;
	if (has_auto && !(prefer_register && has_reg)) {
		c.mode = DataMode::zero_copy;
		c.add_flags = kFlagAutoBufReg;
	} else if (has_reg) {
		c.mode = DataMode::zero_copy_reg;
		c.add_flags = kFlagSupportZeroCopy;
	} else {
		c.note =
			"this ublk driver lacks UBLK_F_AUTO_BUF_REG (Linux 6.16+) and UBLK_F_SUPPORT_ZERO_COPY (6.15+)";
	}
	return c;
}

const char *data_mode_name(DataMode m)
{
	switch (m) {
	case DataMode::zero_copy: return "zero-copy";
	case DataMode::zero_copy_reg: return "zero-copy-register";
	default: return "copy";
	}
}

}  // namespace kvfdp::ublk
