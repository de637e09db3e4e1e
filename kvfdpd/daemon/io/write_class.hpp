// The class of a ublk write, read from the BPF tagger's tag slot with bpf::SlotReader: a
// slot that is fresh and describes the request gives its class; anything else gives the
// default class and counts as stale (only while a tagger is active).
#pragma once

#include <cstdint>

#include "bpf/tag.h"
#include "bpf/user/slot_reader.hpp"

namespace kvfdp::daemon {

struct WriteClass {
	uint8_t cls = KVFDP_CLASS_NOT_SET;
	bool stale = false;   // a tagger is active but the slot did not match this request
	uint32_t writer = 0;  // the file's writer id (bpf/tagger.h KVFDP_WRITER_*), 0 unknown
};

// One queue's slot reader: slots is the tagger's whole array (nullptr: no tagger), the
// queue's slots are [queue * depth, queue * depth + depth), seen as qid 0 of the reader.
[[nodiscard]] inline bpf::SlotReader queue_slot_reader(const volatile kvfdp_tag_slot *slots,
						       uint16_t queue, uint16_t depth)
{
	if (!slots)
		return bpf::SlotReader();
	return bpf::SlotReader(slots + static_cast<size_t>(queue) * depth, 1, depth);
}

// Classifies a write of `sectors` 512-byte sectors at `sector` on `tag`. No allocation,
// lock or syscall; only the queue's own thread calls it.
[[nodiscard]] inline WriteClass classify_write(bpf::SlotReader &slots, uint16_t tag,
					       uint64_t sector, uint32_t sectors)
{
	WriteClass w;
	if (slots.queues() == 0)
		return w;  // no tagger: the default class, nothing is stale
	bpf::TagInfo t;
	if (slots.take(0, tag, sector, sectors, &t) != bpf::SlotMatch::kOk) {
		w.stale = true;
		return w;
	}
	if (t.cls < KVFDP_NR_CLASSES)
		w.cls = t.cls;
	w.writer = t.writer;
	return w;
}

}  // namespace kvfdp::daemon
