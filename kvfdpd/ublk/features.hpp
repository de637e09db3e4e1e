// The 7.x ublk features kvfdpd asks ADD_DEV for beside the data mode (data_mode.hpp): each is
// requested only where GET_FEATURES offers it, never by kernel version; a driver without one
// gets the older behaviour and no error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "kvfdpd/ublk/uapi.hpp"

namespace kvfdp::ublk {

// What kvfdpd would use where offered.
struct FeatureWants {
	bool batch_io = true;  // not --no-batch-io
};

struct FeatureChoice {
	uint64_t add_flags = 0;  // ADD_DEV flags, a subset of what GET_FEATURES offered
	std::string note;        // the wanted features this driver lacks ("" when none)
};

// For a new device. features: GET_FEATURES' answer (an error: a driver older than 6.5, which
// offers none of them). Asks for kFlagNoAutoPartScan, kFlagSafeStopDev and, when wanted,
// kFlagBatchIo, each only where offered.
[[nodiscard]] FeatureChoice choose_features(const Result<uint64_t> &features,
					    const FeatureWants &wants);

// The names of the feature bits in flags ("USER_RECOVERY", "AUTO_BUF_REG", "BATCH_IO", ...),
// lowest bit first; a bit this list does not know reads "bit N".
[[nodiscard]] std::vector<std::string> feature_names(uint64_t flags);

}  // namespace kvfdp::ublk
