// The default class -> handle map (rule in handle_map.hpp).
#include "placement/handle_map.hpp"

namespace kvfdp::placement {

std::array<uint16_t, kNumClasses> default_map(uint16_t nruh)
{
	std::array<uint16_t, kNumClasses> m{};
	if (nruh <= 1)
		return m;
	const unsigned spare = nruh - 1u;
	for (unsigned cls = KVFDP_CLASS_SHORT; cls <= KVFDP_CLASS_EXTREME; cls++) {
		const unsigned level = cls - KVFDP_CLASS_SHORT;  // 0..3
		m[cls] = static_cast<uint16_t>(1 + level * (spare < 4 ? spare : 4) / 4);
	}
	return m;
}

uint16_t default_handle(uint8_t cls, uint16_t nruh)
{
	return cls < kNumClasses ? default_map(nruh)[cls] : 0;
}

}  // namespace kvfdp::placement
