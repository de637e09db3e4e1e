// Tag-slot reader: seq / sector / length matching.
#include "userspace/daemon/tag_reader.hpp"

#include <atomic>

namespace kvfdp::daemon {

TagReader::TagReader(const volatile kvfdp_tag_slot *slots, uint16_t queue, uint16_t depth)
	: base_(slots ? slots + static_cast<size_t>(queue) * depth : nullptr), depth_(depth),
	  last_seq_(new uint64_t[depth]())
{
}

TagResult TagReader::classify(uint16_t tag, uint64_t sector, uint32_t sectors)
{
	TagResult r;
	if (!base_)
		return r;
	if (tag >= depth_) {
		r.stale = true;
		return r;
	}
	const volatile kvfdp_tag_slot &s = base_[tag];
	// The tagger writes every field, then seq: read seq, then the fields, then seq again;
	// a changed seq means the slot was being rewritten (a later request of this tag).
	const uint64_t seq1 = s.seq;
	std::atomic_thread_fence(std::memory_order_acquire);
	const uint64_t sl_sector = s.sector;
	const uint32_t sl_sectors = s.sectors;
	const uint8_t cls = s.cls;
	const uint8_t source = s.source;
	const uint64_t ino = s.ino;
	std::atomic_thread_fence(std::memory_order_acquire);
	const uint64_t seq2 = s.seq;
	if (seq1 == 0 || seq1 != seq2 || seq1 == last_seq_[tag] || sl_sector != sector ||
	    sl_sectors != sectors) {
		r.stale = true;
		return r;
	}
	last_seq_[tag] = seq1;
	if (cls < KVFDP_NR_CLASSES)
		r.cls = cls;
	r.source = source < KVFDP_NR_SOURCES ? source : static_cast<uint8_t>(KVFDP_SRC_DEFAULT);
	r.ino = ino;
	return r;
}

} // namespace kvfdp::daemon
