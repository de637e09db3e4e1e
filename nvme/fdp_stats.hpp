// The FDP statistics log's (0x22) counters as values (nvme/logs.hpp parses and encodes the
// log page).
#pragma once

#include "nvme/u128.hpp"

namespace kvfdp::nvme {

struct FdpStats {
	u128 hbmw = 0;  // host bytes with metadata written
	u128 mbmw = 0;  // media bytes with metadata written
	u128 mbe = 0;   // media bytes erased
};

}  // namespace kvfdp::nvme
