// PrefetchCache: which chunk each prefetch slot holds, and its state from read to claim.
#include "kvgpu/prefetch_cache.hpp"

#include <cstring>

namespace kvfdp::gpu {

bool PrefetchCache::holds(std::string_view key) const
{
	bool staged = false;
	for (const PrefetchEntry &pe : entries_)
		staged = staged || pe.is(key);
	return staged;
}

void PrefetchCache::forget(std::string_view key)
{
	for (PrefetchEntry &p : entries_) {
		if (!p.is(key))
			continue;
		if (p.state == PrefetchState::staged)
			p.state = PrefetchState::
				free;  // its slot is idle: the next prefetch reuses it
		else if (p.state == PrefetchState::reading)
			p.stale = true;
	}
}

int PrefetchCache::claim(std::string_view key, uint64_t max_bytes, uint64_t *bytes,
			 int64_t *wait_for)
{
	*wait_for = 0;
	for (size_t p = 0; p < entries_.size(); p++) {
		PrefetchEntry &pe = entries_[p];
		if (!pe.is(key) || pe.stale)
			continue;
		if (pe.state == PrefetchState::staged && pe.bytes <= max_bytes) {
			pe.state = PrefetchState::claimed;
			*bytes = pe.bytes;
			return static_cast<int>(p);
		}
		if (pe.state == PrefetchState::reading)
			*wait_for = pe.ticket;
		break;
	}
	return -1;
}

int PrefetchCache::pick(std::string_view key, uint64_t start_gen, bool *have)
{
	*have = false;
	for (PrefetchEntry &pe : entries_)
		if (pe.is(key) && !pe.stale && pe.state != PrefetchState::claimed)
			*have = true;
	if (*have)
		return -1;
	// A free entry, else the one staged longest ago.
	int p = -1;
	for (size_t q = 0; q < entries_.size(); q++) {
		PrefetchEntry &pe = entries_[q];
		if (pe.state == PrefetchState::free) {
			p = static_cast<int>(q);
			break;
		}
		if (pe.state == PrefetchState::staged && pe.gen <= start_gen &&
		    (p < 0 || pe.gen < entries_[size_t(p)].gen))
			p = static_cast<int>(q);
	}
	if (p < 0)
		return -1;  // every buffer is being read or copied
	PrefetchEntry &pe = entries_[size_t(p)];
	pe.state = PrefetchState::reading;
	pe.stale = false;
	pe.ticket = 0;
	pe.key_len = static_cast<uint32_t>(key.size());
	std::memcpy(pe.key, key.data(), key.size());
	return p;
}

void PrefetchCache::set_read(int p, int64_t ticket, uint64_t bytes)
{
	entries_[size_t(p)].ticket = ticket;
	entries_[size_t(p)].bytes = bytes;
}

void PrefetchCache::finish(int p, bool by_load, bool read_ok)
{
	PrefetchEntry &pe = entries_[size_t(p)];
	if (read_ok && !pe.stale && pe.state == PrefetchState::reading) {
		pe.state = PrefetchState::staged;
		pe.gen = ++gen_;
	} else if (by_load || pe.state == PrefetchState::reading) {
		pe.state = PrefetchState::free;
		pe.stale = false;
	}
}

}  // namespace kvfdp::gpu
