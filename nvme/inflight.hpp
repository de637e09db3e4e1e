// InflightMap: a fixed-capacity map from a request's user_data to per-request state, for
// IoQueues that must remember something until the CQE arrives. Allocates only when built.
#pragma once

#include <cstdint>
#include <vector>

namespace kvfdp::nvme {

// Open addressing with linear probing and backward-shift deletion. Not thread-safe.
// Keys must be unique among live entries (user_data of in-flight requests is).
template <class V> class InflightMap {
public:
	// Room for at least max_live entries (the table is kept at most half full).
	explicit InflightMap(size_t max_live)
	{
		size_t cap = 16;
		while (cap < 2 * max_live)
			cap <<= 1;
		slots_.resize(cap);
		mask_ = cap - 1;
		limit_ = cap / 2;
	}

	[[nodiscard]] size_t size() const { return live_; }
	[[nodiscard]] bool empty() const { return live_ == 0; }

	// Stores value under key; false when full. Entries move on erase: never keep a
	// pointer into the map (keep an index into a stable pool instead).
	bool insert(uint64_t key, const V &value)
	{
		if (live_ >= limit_)
			return false;
		size_t i = hash(key);
		while (slots_[i].used)
			i = (i + 1) & mask_;
		slots_[i].used = true;
		slots_[i].key = key;
		slots_[i].value = value;
		++live_;
		return true;
	}

	// Removes key; returns true and its value in out when it was present.
	bool take(uint64_t key, V &out)
	{
		if (live_ == 0)
			return false;
		size_t i = hash(key);
		while (slots_[i].used && slots_[i].key != key)
			i = (i + 1) & mask_;
		if (!slots_[i].used)
			return false;
		out = slots_[i].value;
		erase_at(i);
		return true;
	}

private:
	struct Slot {
		uint64_t key = 0;
		bool used = false;
		V value{};
	};

	[[nodiscard]] size_t hash(uint64_t k) const
	{
		k ^= k >> 33;
		k *= 0xff51afd7ed558ccdull;
		k ^= k >> 33;
		return static_cast<size_t>(k) & mask_;
	}

	void erase_at(size_t i)
	{
		slots_[i].used = false;
		--live_;
		size_t j = i;
		for (;;) {
			j = (j + 1) & mask_;
			if (!slots_[j].used)
				return;
			size_t home = hash(slots_[j].key);
			// Move j back to i if its home is not within (i, j].
			bool between = i <= j ? (i < home && home <= j) : (i < home || home <= j);
			if (!between) {
				slots_[i] = slots_[j];
				slots_[j].used = false;
				i = j;
			}
		}
	}

	std::vector<Slot> slots_;
	size_t mask_ = 0;
	size_t limit_ = 0;
	size_t live_ = 0;
};

}  // namespace kvfdp::nvme
