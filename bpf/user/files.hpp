// Per-file lifetime records built from the tagger's events (class, bytes, birth, death)
// and a log2 histogram of measured lifetimes per class; kvfdpd's `files` reply and the
// CLI read them.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bpf/tag.h"
#include "bpf/tagger.h"

namespace kvfdp::bpf {

struct FileRecord {
	uint32_t dev = 0;
	uint64_t ino = 0;
	uint8_t cls = KVFDP_CLASS_NOT_SET;  // last hint, else the directory rule's class
	bool cls_from_rule = false;
	uint64_t bytes = 0;     // bytes tagged requests attributed to it
	uint64_t birth_ns = 0;  // CLOCK_MONOTONIC; 0 = created before we watched
	uint64_t death_ns = 0;  // 0 = alive
	uint32_t pid = 0;       // who created or hinted it
	std::string comm;
	uint32_t writer = 0;       // writer id at creation (tagger.h KVFDP_WRITER_*), 0 unknown
	uint64_t cgroup_id = 0;    // the creating task's cgroup v2 id, 0 unknown
	uint64_t subtree_ino = 0;  // nearest ancestor directory with a rule or writer, 0 none

	// death - birth, or 0 when either is unknown.
	[[nodiscard]] uint64_t lifetime_ns() const
	{
		return birth_ns && death_ns > birth_ns ? death_ns - birth_ns : 0;
	}
};

// Lifetimes in log2 buckets of microseconds: bucket i holds [2^i, 2^(i+1)) us (bucket 0
// also holds < 1 us; the last bucket is open-ended).
class LifetimeHistogram {
public:
	static constexpr int kBuckets = 40;

	void add(uint64_t lifetime_ns);
	[[nodiscard]] static int bucket_of(uint64_t lifetime_ns);
	// Lower bound of bucket i, in microseconds.
	[[nodiscard]] static uint64_t bucket_floor_us(int i) { return i == 0 ? 0 : 1ull << i; }
	[[nodiscard]] const std::array<uint64_t, kBuckets> &buckets() const { return buckets_; }
	[[nodiscard]] uint64_t count() const { return count_; }
	[[nodiscard]] uint64_t sum_ns() const { return sum_ns_; }

private:
	std::array<uint64_t, kBuckets> buckets_{};
	uint64_t count_ = 0;
	uint64_t sum_ns_ = 0;
};

class FileTable {
public:
	// Records of live files kept at most (the tagger's per-inode maps hold as many).
	static constexpr size_t kMaxLive = KVFDP_INODE_MAP_ENTRIES;

	// Keeps at most max_dead records of deleted files (oldest dropped first) and max_live
	// records of live ones: a create into a full table drops the oldest-created live record
	// (a file whose unlink no hook saw, or simply the oldest) and counts it.
	explicit FileTable(size_t max_dead = 4096, size_t max_live = kMaxLive)
	    : max_dead_(max_dead), max_live_(max_live ? max_live : 1)
	{
	}

	// Folds one event in; an UNLINK of the last link closes the record, adds its
	// lifetime to its class's histogram and moves it to the dead list.
	void on_event(const kvfdp_event &e);
	// Refreshes the bytes of live records from lookup(dev, ino) (e.g. Tagger::inode_bytes).
	void refresh_bytes(const std::function<uint64_t(uint32_t, uint64_t)> &lookup);

	[[nodiscard]] const FileRecord *find_live(uint32_t dev, uint64_t ino) const;
	// The most recent dead record of (dev, ino), or nullptr.
	[[nodiscard]] const FileRecord *find_dead(uint32_t dev, uint64_t ino) const;
	[[nodiscard]] std::vector<FileRecord> live() const;
	[[nodiscard]] const std::deque<FileRecord> &dead() const { return dead_; }
	[[nodiscard]] size_t live_count() const { return live_.size(); }
	[[nodiscard]] size_t max_live() const { return max_live_; }
	// Live records dropped to keep the bound, since construction.
	[[nodiscard]] uint64_t live_evictions() const { return live_evictions_; }
	// Sets the writer of a live record (the tagger's event thread resolved its identity).
	void set_writer(uint32_t dev, uint64_t ino, uint32_t writer);
	[[nodiscard]] const LifetimeHistogram &histogram(uint8_t cls) const
	{
		return hist_[cls < KVFDP_NR_CLASSES ? cls : 0];
	}

private:
	using Key = std::pair<uint32_t, uint64_t>;
	struct Live {
		FileRecord r;
		uint64_t seq = 0;  // order of creation: its key in order_
	};
	FileRecord &record(const kvfdp_event &e);
	void erase_live(std::map<Key, Live>::iterator it);

	std::map<Key, Live> live_;
	std::map<uint64_t, Key> order_;  // live records, oldest first
	uint64_t next_seq_ = 0;
	std::deque<FileRecord> dead_;
	size_t max_dead_;
	size_t max_live_;
	uint64_t live_evictions_ = 0;
	std::array<LifetimeHistogram, KVFDP_NR_CLASSES> hist_{};
};

}  // namespace kvfdp::bpf
