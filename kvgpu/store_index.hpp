// kvfdp::gpu::StoreIndex: the bounded store's index of chunks, in memory and as an append-only
// journal of checksummed records; capacity accounting, the eviction order (FIFO, LRU, FIFO2)
// and the reclaimer thread that unlinks evicted chunks off the caller's thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/unique_fd.hpp"
#include "kvgpu/chunk_format.hpp"
#include "kvgpu/kvgpu.h"

namespace kvfdp::gpu {

// The journal file in the store directory, and its replacement while it is compacted.
inline constexpr char kIndexName[] = ".kvgpu-index";
inline constexpr char kIndexNewName[] = ".kvgpu-index.new";
// An evicted chunk renamed out of the way, waiting for the reclaimer's unlink: prefix + number.
inline constexpr char kDeadPrefix[] = ".kvgpu-dead-";

// Journal layout: a 16-byte header, then records of 40 bytes + the key, each padded to 8.
struct IndexFileHeader {
	char magic[8];     // "KVGPUIX1"
	uint32_t version;  // 1
	uint32_t crc;      // CRC32C of the 12 bytes before it
};
static_assert(sizeof(IndexFileHeader) == 16, "index header is 16 bytes on disk");

// touch: a load of the chunk (its version in seq, its loads since written in hits); replayed,
// LRU moves it to the newest end and FIFO2 takes its count, so the eviction order survives.
enum IndexRecordType : uint16_t { kRecordAdd = 1, kRecordDel = 2, kRecordTouch = 3 };

struct IndexRecord {
	uint32_t crc;      // CRC32C of the record (this field 0) and the key
	uint16_t type;     // IndexRecordType
	uint16_t key_len;  // 1..KVGPU_MAX_KEY
	uint64_t seq;      // add, del: increases with every record; touch: the chunk's version
	uint64_t payload_bytes;  // add: the chunk's length
	uint32_t payload_crc;    // add: the chunk header's payload CRC32C
	uint32_t lifetime;       // add: the RWH value it was written with
	uint32_t flags;          // add: the chunk header's flags
	uint32_t hits;           // add, touch: loads since it was (re)written
};
static_assert(sizeof(IndexRecord) == 40, "index record is 40 bytes on disk");
inline constexpr size_t kMaxRecordBytes = sizeof(IndexRecord) + KVGPU_MAX_KEY + 8;
// Touch records wait in memory up to this many bytes, then go out with the next record's
// write(2) (one syscall, no write per load); a crash loses at most these.
inline constexpr size_t kTouchBufferBytes = 64 * 1024;

struct StoreEntry {
	std::string key;
	uint64_t file_bytes = 0;
	uint64_t payload_bytes = 0;
	uint64_t seq = 0;  // the record that added it: a version number
	uint32_t payload_crc = 0;
	uint32_t lifetime = 0;
	uint32_t flags = 0;
	uint32_t hits = 0;  // loads since it was (re)written
	bool seen = false;  // open: its file was found in the directory
	StoreEntry *newer = nullptr;
	StoreEntry *older = nullptr;
};

struct StoreConfig {
	uint64_t capacity = 0;
	uint32_t policy = KVGPU_EVICT_FIFO;
	uint32_t reinsert_hits = 1;
	bool durable = false;  // fdatasync the journal after each append
	bool direct = false;   // FIFO2 rewrites with O_DIRECT
	bool inline_unlink =
		false;  // KVGPU_RECLAIM_INLINE: evictions unlink in the caller's thread
};

// Transparent hashing: lookups by string_view allocate nothing.
struct KeyHash {
	using is_transparent = void;
	size_t operator()(std::string_view s) const noexcept
	{
		return std::hash<std::string_view>{}(s);
	}
};

class StoreIndex {
public:
	StoreIndex() = default;
	~StoreIndex();
	StoreIndex(const StoreIndex &) = delete;
	StoreIndex &operator=(const StoreIndex &) = delete;

	// Takes the directory lock, replays the journal (or rebuilds it from the chunk headers when
	// it is missing or corrupt), reconciles it with the directory's names (no payload reads),
	// removes dead processes' temp files and evicts down to the capacity. 0 or a kvgpu_error.
	[[nodiscard]] int open(int dir_fd, const StoreConfig &cfg);

	// Everything below: the caller holds mu().
	[[nodiscard]] std::mutex &mu() { return mu_; }
	[[nodiscard]] const StoreEntry *find(std::string_view key) const;
	// Makes room for a chunk file of file_bytes by the policy (waits while only evicts in
	// flight hold the space) and reserves it. KVGPU_ERR_CAPACITY when it can never fit.
	[[nodiscard]] int reserve(uint64_t file_bytes, std::unique_lock<std::mutex> &lock);
	// An evict that reserved file_bytes failed.
	void unreserve(uint64_t file_bytes);
	// Publishes the complete temp file tmp under key (rename, journal, index) and turns its
	// reservation into used bytes; replaces an older chunk of key. 0 or a negative errno.
	[[nodiscard]] int commit(const char *tmp, std::string_view key, uint64_t payload_bytes,
				 uint32_t payload_crc, uint32_t lifetime, uint32_t flags);
	// A load found key: counts the hit, moves it for LRU; returns its seq.
	uint64_t hit(const StoreEntry *e);
	void miss() { misses_++; }
	// Unlinks key's chunk and forgets it. 0 or KVGPU_ERR_NOT_FOUND / a kvgpu_error.
	[[nodiscard]] int remove(std::string_view key);
	// A load of version seq of key found a complete chunk of another length in its file (a
	// replacement whose journal record a crash lost): the index takes the file's length.
	void correct(std::string_view key, uint64_t seq, uint64_t payload_bytes,
		     uint32_t payload_crc);
	// A load of version seq of key found it missing or damaged: unlink it and forget it.
	void drop(std::string_view key, uint64_t seq);
	void stats(kvgpu_stats_t *out) const;
	[[nodiscard]] uint64_t stale_temps() const { return stale_temps_; }
	// Bytes of evicted chunks renamed away and not yet unlinked, and the most there may be
	// before a reservation waits for the reclaimer; the disk bound this gives is stated once,
	// at KVGPU_RECLAIM_BACKGROUND in kvgpu.h.
	[[nodiscard]] uint64_t dead_bytes() const { return dead_bytes_; }
	[[nodiscard]] uint64_t dead_bound() const { return dead_bound_; }
	// Stops the reclaimer after its last unlink and writes the waiting touch records.
	void close();

private:
	void link_newest(StoreEntry *e);
	void unlink_entry(StoreEntry *e);
	StoreEntry *add_entry(std::string_view key, uint64_t payload_bytes, uint32_t crc,
			      uint32_t lifetime, uint32_t flags, uint64_t seq);
	void erase_entry(StoreEntry *e);
	// Appends one record; compacts the journal when dead records dominate.
	void append(uint16_t type, const StoreEntry &e);
	void append_del(std::string_view key);
	// Encodes a record after the waiting touches; flush: write them all out now.
	int write_record(uint16_t type, std::string_view key, uint64_t payload_bytes, uint32_t crc,
			 uint32_t lifetime, uint32_t flags, uint64_t seq, uint32_t hits,
			 bool flush = true);
	int flush_records();
	// The reclaimer thread: unlinks the dead files queued by evict_one.
	void reclaim_loop();
	[[nodiscard]] int compact();
	// 0: replayed; 1: no journal; KVGPU_ERR_INDEX: corrupt.
	int replay(std::vector<char> &buf);
	int scan_directory(bool rebuild);
	// Reads the header of a chunk file the index lacks: adds it when complete, else unlinks it.
	StoreEntry *adopt(const char *name, uint64_t *created_ns);
	void evict_one(StoreEntry *victim);
	bool rewrite_in_place(StoreEntry *e);
	void clear();

	StoreConfig cfg_{};
	int dir_fd_ = -1;
	UniqueFd journal_;
	std::mutex mu_;
	std::condition_variable cv_;
	std::unordered_map<std::string, StoreEntry *, KeyHash, std::equal_to<>> map_;
	StoreEntry *newest_ = nullptr;
	StoreEntry *oldest_ = nullptr;
	uint64_t used_ = 0;
	uint64_t reserved_ = 0;
	uint64_t next_seq_ = 1;
	uint64_t records_ = 0;
	char *record_buf_ = nullptr;  // kTouchBufferBytes + kMaxRecordBytes, allocated at open
	size_t record_len_ = 0;       // bytes of records encoded there, not yet written
	static constexpr size_t kRewriteBytes = 1u << 20;  // rewrite_buf_'s size
	char *rewrite_buf_ = nullptr;  // kRewriteBytes, kBlock aligned: FIFO2 in-place rewrites
	// Counters (guarded by mu_).
	uint64_t evictions_ = 0, evicted_bytes_ = 0, reinserts_ = 0, reinserted_bytes_ = 0;
	uint64_t hits_ = 0, misses_ = 0, dropped_ = 0, adopted_ = 0, rebuilds_ = 0;
	uint64_t stale_temps_ = 0;
	int index_error_ = 0;
	// The reclaimer (guarded by mu_): dead file numbers and sizes waiting for their unlink.
	std::thread reclaimer_;
	std::condition_variable reclaim_cv_;
	std::vector<std::pair<uint64_t, uint64_t>> dead_, dead_work_;
	uint64_t dead_bytes_ = 0, dead_bound_ = 0, next_dead_ = 1;
	bool stop_reclaim_ = false;
};

}  // namespace kvfdp::gpu
