// 128-bit counters (the FDP statistics log's, SMART's): the type and its value as a double.
#pragma once

namespace kvfdp::nvme {

__extension__ typedef unsigned __int128 u128;

// A 128-bit counter as a double (exact up to 2^53).
[[nodiscard]] inline double to_double(u128 v)
{
	return static_cast<double>(v);
}

}  // namespace kvfdp::nvme
