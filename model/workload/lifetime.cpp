// Lifetime recording and quantile bucketing for oracle placement.
#include "model/workload/lifetime.hpp"

#include <algorithm>
#include <numeric>

#include "bpf/tag.h"

namespace kvfdp::workload {

uint64_t LifetimeRecorder::birth(uint64_t clock, uint64_t bytes)
{
	birth_.push_back(clock);
	death_.push_back(kNever);
	bytes_.push_back(bytes);
	return birth_.size() - 1;
}

void LifetimeRecorder::death(uint64_t version, uint64_t clock)
{
	if (version < death_.size() && death_[version] == kNever)
		death_[version] = clock;
}

uint64_t LifetimeRecorder::lifetime(uint64_t version) const
{
	if (death_[version] == kNever)
		return kNever;
	return death_[version] - birth_[version];
}

std::vector<uint8_t> LifetimeRecorder::classify() const
{
	const uint64_t n = birth_.size();
	std::vector<uint8_t> cls(n, KVFDP_CLASS_SHORT);
	if (n == 0)
		return cls;
	std::vector<uint64_t> order(n);
	std::iota(order.begin(), order.end(), 0);
	std::stable_sort(order.begin(), order.end(),
			 [this](uint64_t a, uint64_t b) { return lifetime(a) < lifetime(b); });
	const long double total =
		std::accumulate(bytes_.begin(), bytes_.end(), static_cast<long double>(0));
	// Walk in lifetime order; a version's class is the quartile its first byte falls in,
	// and equal lifetimes stay together.
	long double before = 0;
	uint8_t cur = KVFDP_CLASS_SHORT;
	uint64_t prev_life = 0;
	for (uint64_t i = 0; i < n; ++i) {
		uint64_t v = order[i];
		uint64_t life = lifetime(v);
		if (i == 0 || life != prev_life) {
			int q = total > 0 ? static_cast<int>(before * 4 / total) : 0;
			uint8_t want = static_cast<uint8_t>(KVFDP_CLASS_SHORT + std::min(q, 3));
			cur = std::max(cur, want);
		}
		// Still-alive data is the longest-lived of all.
		if (life == kNever)
			cur = KVFDP_CLASS_EXTREME;
		cls[v] = cur;
		before += bytes_[v];
		prev_life = life;
	}
	return cls;
}

}  // namespace kvfdp::workload
