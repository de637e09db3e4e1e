// Zero-syscall reader of the tagger's mmapped tag-slot array, for kvfdpd's queue threads.
// Header-only hot path; it depends on nothing but bpf/tag.h, so it also runs over a plain
// array in tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "bpf/tag.h"

namespace kvfdp::bpf {

// What take() found for a request.
enum class SlotMatch : uint8_t {
	kOk = 0,        // a fresh slot that describes this request
	kStale = 1,     // the slot was not rewritten since it was last taken (or never written)
	kMismatch = 2,  // a fresh slot, but for another sector range
	kNoSlot = 3,    // (qid, tag) lies outside the array, or no array
};

// A consistent copy of one slot.
struct TagInfo {
	uint64_t seq = 0;
	uint64_t sector = 0;
	uint32_t sectors = 0;
	uint32_t dev = 0;
	uint64_t ino = 0;
	uint8_t cls = KVFDP_CLASS_NOT_SET;
	uint8_t source = KVFDP_SRC_DEFAULT;
	uint8_t op = 0;
	uint8_t flags = 0;
	uint32_t writer = 0;  // KVFDP_WRITER_* id of the file's creator, 0 unknown
};

class SlotReader {
public:
	SlotReader() = default;
	// base: the mmapped array of queues * depth slots (element i at i * sizeof(slot),
	// sizeof is a multiple of 8). The reader does not own the mapping.
	SlotReader(const volatile kvfdp_tag_slot *base, uint32_t queues, uint32_t depth)
	    : base_(base), queues_(queues), depth_(depth),
	      last_seq_(static_cast<size_t>(queues) * depth, 0)
	{
	}

	[[nodiscard]] uint32_t queues() const { return queues_; }
	[[nodiscard]] uint32_t depth() const { return depth_; }

	// The raw slot for (qid, tag), or nullptr when out of range. Fields may change under
	// the caller while the tag is being reissued; prefer take().
	[[nodiscard]] const volatile kvfdp_tag_slot *slot(uint32_t qid, uint32_t tag) const
	{
		if (!base_ || qid >= queues_ || tag >= depth_)
			return nullptr;
		return base_ + static_cast<size_t>(qid) * depth_ + tag;
	}

	// Reads the slot of (qid, tag) for a request at (sector, sectors) in 512-byte
	// sectors, and marks its seq consumed when it matches. Only the thread serving qid may
	// call it for that qid (the consumed-seq table is per slot, unsynchronised).
	SlotMatch take(uint32_t qid, uint32_t tag, uint64_t sector, uint32_t sectors, TagInfo *out)
	{
		const volatile kvfdp_tag_slot *s = slot(qid, tag);
		if (!s)
			return SlotMatch::kNoSlot;
		uint64_t &last = last_seq_[static_cast<size_t>(qid) * depth_ + tag];
		TagInfo t;
		// The tagger writes seq last: read it first, copy, and re-read it to catch a
		// rewrite that raced with the copy.
		t.seq = load_seq(s);
		if (t.seq == 0 || t.seq == last)
			return SlotMatch::kStale;
		t.sector = s->sector;
		t.sectors = s->sectors;
		t.dev = s->dev;
		t.ino = s->ino;
		t.cls = s->cls;
		t.source = s->source;
		t.op = s->op;
		t.writer = s->writer;
		t.flags = s->flags;
		std::atomic_thread_fence(std::memory_order_acquire);
		if (load_seq(s) != t.seq)
			return SlotMatch::kStale;
		if (t.sector != sector || t.sectors != sectors)
			return SlotMatch::kMismatch;
		last = t.seq;
		if (out)
			*out = t;
		return SlotMatch::kOk;
	}

private:
	static uint64_t load_seq(const volatile kvfdp_tag_slot *s)
	{
		uint64_t v = s->seq;
		std::atomic_thread_fence(std::memory_order_acquire);
		return v;
	}

	const volatile kvfdp_tag_slot *base_ = nullptr;
	uint32_t queues_ = 0;
	uint32_t depth_ = 0;
	std::vector<uint64_t> last_seq_;  // last consumed seq per slot
};

}  // namespace kvfdp::bpf
