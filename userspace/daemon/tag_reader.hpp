// Tag-slot reader: the class of a ublk write from the BPF tagger's mmapped slot array,
// with no syscall. A slot counts only if its seq changed since this reader last consumed it
// and its sector / length match the request; otherwise the write gets the default class
// and is counted as stale.
#pragma once

#include <cstdint>
#include <memory>

#include "bpf/tag.h"

namespace kvfdp::daemon {

struct TagResult {
	uint8_t cls = KVFDP_CLASS_NOT_SET;
	uint8_t source = KVFDP_SRC_DEFAULT;
	bool stale = false;   // a tagger is active but the slot did not match
	uint64_t ino = 0;
};

// One queue's view of the slot array. Single-threaded (one per queue thread).
class TagReader {
public:
	// slots: the mmapped array (nullptr: no tagger, every write is the default class and
	// nothing counts as stale). The queue's slots are [queue*depth, queue*depth + depth).
	// Allocates its per-tag state here, never in classify().
	TagReader(const volatile kvfdp_tag_slot *slots, uint16_t queue, uint16_t depth);

	// The class for a write of `sectors` 512-byte sectors at `sector`, issued on `tag`.
	[[nodiscard]] TagResult classify(uint16_t tag, uint64_t sector, uint32_t sectors);
	[[nodiscard]] bool active() const { return base_ != nullptr; }

private:
	const volatile kvfdp_tag_slot *base_;
	uint16_t depth_;
	std::unique_ptr<uint64_t[]> last_seq_;
};

} // namespace kvfdp::daemon
