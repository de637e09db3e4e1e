// One placement handle as RUH Status reports it (Device::handles(), nvme/device.hpp).
#pragma once

#include <cstdint>

namespace kvfdp::nvme {

// One placement handle, in RUH Status order. index is kvfdp's handle number (0 = default);
// pid is taken verbatim from RUH Status and is what goes into DSPEC.
struct Handle {
	uint16_t index = 0;
	uint16_t pid = 0;
	uint16_t ruhid = 0;
	uint8_t ruht = 0;     // 1 = initially isolated, 2 = persistently isolated
	uint32_t earutr = 0;  // estimated active RU time remaining, seconds
	uint64_t ruamw = 0;   // reclaim unit available media writes, in LBAs
};

}  // namespace kvfdp::nvme
