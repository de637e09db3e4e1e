// Choosing the 7.x features from the driver's GET_FEATURES, and naming feature bits.
#include "kvfdpd/ublk/features.hpp"

#include <array>
#include <utility>

namespace kvfdp::ublk {

namespace {

// linux/ublk_cmd.h's UBLK_F_* names without the prefix, by bit.
constexpr std::array<const char *, 21> kNames = {
	"SUPPORT_ZERO_COPY",
	"URING_CMD_COMP_IN_TASK",
	"NEED_GET_DATA",
	"USER_RECOVERY",
	"USER_RECOVERY_REISSUE",
	"UNPRIVILEGED_DEV",
	"CMD_IOCTL_ENCODE",
	"USER_COPY",
	"ZONED",
	"USER_RECOVERY_FAIL_IO",
	"UPDATE_SIZE",
	"AUTO_BUF_REG",
	"QUIESCE",
	"PER_IO_DAEMON",
	"BUF_REG_OFF_DAEMON",
	"BATCH_IO",
	"INTEGRITY",
	"SAFE_STOP_DEV",
	"NO_AUTO_PART_SCAN",
	"SHMEM_ZC",
	"IO_DESC_SIZE",
};

}  // namespace

FeatureChoice choose_features(const Result<uint64_t> &features, const FeatureWants &wants)
{
	FeatureChoice c;
	const uint64_t offered = features ? *features : 0;
	std::vector<std::pair<uint64_t, const char *>> wanted = {
		{kFlagNoAutoPartScan, "NO_AUTO_PART_SCAN"}, {kFlagSafeStopDev, "SAFE_STOP_DEV"}};
	if (wants.batch_io)
		wanted.emplace_back(kFlagBatchIo, "BATCH_IO");
	std::string lacking;
	for (const auto &[flag, name] : wanted) {
		if (offered & flag)
			c.add_flags |= flag;
		else
			lacking += std::string(lacking.empty() ? "" : ", ") + "UBLK_F_" + name;
	}
	if (!lacking.empty())
		c.note = "this ublk driver lacks " + lacking + " (Linux 7.x)";
	return c;
}

std::vector<std::string> feature_names(uint64_t flags)
{
	std::vector<std::string> out;
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(flags & (1ull << bit)))
			continue;
		out.emplace_back(bit < kNames.size() ? std::string(kNames[bit])
						     : "bit " + std::to_string(bit));
	}
	return out;
}

}  // namespace kvfdp::ublk
