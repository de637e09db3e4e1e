// The handle that takes most of some keys' writes now: the one a group keeps, or that says
// which side of a cut is apart. One helper for the order split (mixing_cost.cpp) and the
// class and writer splits (class_split.cpp), whose key types differ.
#pragma once

#include <cstdint>
#include <map>

namespace kvfdp::placement {

// ks: key indexes; handle(i) and share(i): key i's handle and write share. The lowest handle
// wins a tie; 0 for no keys.
template <class Keys, class Handle, class Share>
[[nodiscard]] uint16_t main_handle_of(const Keys &ks, Handle handle, Share share)
{
	std::map<uint16_t, double> per;
	for (uint32_t i : ks)
		per[handle(i)] += share(i);
	uint16_t best = 0;
	double most = -1;
	for (const auto &[h, s] : per)
		if (s > most) {
			most = s;
			best = h;
		}
	return best;
}

}  // namespace kvfdp::placement
