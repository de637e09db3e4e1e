// LruMap: a map of at most `capacity` entries; inserting into a full one drops the least
// recently used entry and counts it. For the caches of names and paths kvfdpd keeps off the
// data path (cgroup paths, writer identities, directory names). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <utility>

namespace kvfdp {

template <class K, class V, class Hash = std::hash<K>> class LruMap {
public:
	explicit LruMap(size_t capacity) : capacity_(capacity ? capacity : 1) {}

	// The value of k (now the most recently used), or nullptr.
	V *find(const K &k)
	{
		auto it = index_.find(k);
		if (it == index_.end())
			return nullptr;
		order_.splice(order_.begin(), order_, it->second);
		return &it->second->second;
	}
	// The value of k without touching its recency, or nullptr.
	[[nodiscard]] const V *peek(const K &k) const
	{
		auto it = index_.find(k);
		return it == index_.end() ? nullptr : &it->second->second;
	}
	// Inserts or replaces k's value (most recently used); evicts the least recently used
	// entry when that would exceed the capacity.
	V &put(const K &k, V v)
	{
		if (V *cur = find(k)) {
			*cur = std::move(v);
			return *cur;
		}
		if (index_.size() >= capacity_) {
			index_.erase(order_.back().first);
			order_.pop_back();
			evictions_++;
		}
		order_.emplace_front(k, std::move(v));
		index_.emplace(k, order_.begin());
		return order_.front().second;
	}
	bool erase(const K &k)
	{
		auto it = index_.find(k);
		if (it == index_.end())
			return false;
		order_.erase(it->second);
		index_.erase(it);
		return true;
	}
	void clear()
	{
		order_.clear();
		index_.clear();
	}
	[[nodiscard]] size_t size() const { return index_.size(); }
	[[nodiscard]] size_t capacity() const { return capacity_; }
	// Entries dropped to make room, since construction.
	[[nodiscard]] uint64_t evictions() const { return evictions_; }

private:
	using Order = std::list<std::pair<K, V>>;
	size_t capacity_;
	Order order_;  // most recently used first
	std::unordered_map<K, typename Order::iterator, Hash> index_;
	uint64_t evictions_ = 0;
};

}  // namespace kvfdp
