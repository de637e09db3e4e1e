// PrefetchCache: the entries of the prefetch slots, each naming the chunk that is being read
// into, or is staged in, its pinned buffer until a load claims it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kvgpu/kvgpu.h"

namespace kvfdp::gpu {

enum class PrefetchState : uint8_t { free, reading, staged, claimed };

struct PrefetchEntry {
	PrefetchState state = PrefetchState::free;
	bool stale = false;  // replaced or removed while being read: discard when done
	int64_t ticket = 0;
	uint64_t bytes = 0;
	uint64_t gen = 0;  // when it was staged: the oldest staged entry is reused first
	uint32_t key_len = 0;
	char key[KVGPU_MAX_KEY + 1] = {};
	[[nodiscard]] bool is(std::string_view k) const
	{
		return state != PrefetchState::free && std::string_view(key, key_len) == k;
	}
};

// Entry p stands for prefetch slot p. Every method but init and empty is called with the job
// table's lock held: an entry and the job that fills or reads it change state together.
class PrefetchCache {
public:
	void init(unsigned entries) { entries_ = std::vector<PrefetchEntry>(entries); }
	// No lock needed: the number of entries is fixed at open.
	[[nodiscard]] bool empty() const { return entries_.empty(); }

	// Some entry (in any state) names key.
	[[nodiscard]] bool holds(std::string_view key) const;
	// key was replaced or removed: a staged copy is dropped, a read in flight marked stale.
	void forget(std::string_view key);
	// A load of key into max_bytes: claims key's staged entry (its index, *bytes its length),
	// or returns -1 with *wait_for the ticket of key's read in flight (0: none).
	[[nodiscard]] int claim(std::string_view key, uint64_t max_bytes, uint64_t *bytes,
				int64_t *wait_for);
	// Entry p is free again.
	void release(int p) { entries_[size_t(p)].state = PrefetchState::free; }
	// The generation of the entry staged last.
	[[nodiscard]] uint64_t gen() const { return gen_; }
	// For a prefetch of key: *have when key is staged or being read already; else an entry to
	// read it into (free, else the oldest staged at or before start_gen), marked reading, or -1.
	[[nodiscard]] int pick(std::string_view key, uint64_t start_gen, bool *have);
	// Entry p's read is ticket, of a chunk of bytes.
	void set_read(int p, int64_t ticket, uint64_t bytes);
	// Entry p's job is done: by_load, a load copied it out (the entry is free); else a prefetch
	// read it, read_ok without an error (the entry is staged unless it went stale).
	void finish(int p, bool by_load, bool read_ok);

private:
	std::vector<PrefetchEntry> entries_;
	uint64_t gen_ = 0;
};

}  // namespace kvfdp::gpu
