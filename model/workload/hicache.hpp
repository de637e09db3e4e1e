// SGLang HiCache's file storage backend (`--workload hicache`, and engine B of the mixed host),
// as sglang's python/sglang/srt/mem_cache/hicache_storage.py (HiCacheFile) and
// storage/file/lru_file_evictor.py (LRUFileEvictor) have it:
// - one file per page, named by the page's chained SHA-256 key plus a model/rank suffix
//   (`{key}_{model}_{tp_rank}_{tp_size}.bin`), written whole (to a temp name, then renamed);
// - a page is written once: set() of a key already on disk only refreshes its recency;
// - reads (get) and repeated sets move the page to the most recently used end;
// - with a size cap (SGLANG_HICACHE_FILE_BACKEND_MAX_SIZE), a write that would pass the cap
//   unlinks least recently used pages until the total is at most cap x eviction_ratio (0.9 by
//   default) less the new page: a batch of about a tenth of the cap at once.
// The host memory tier in front of it is not modelled: every request's pages are looked up on
// disk. HostDisk is the file layer the host engines share: files on a BlockFs, slots written in
// place, one write clock and one version count for the oracle.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "model/sim/workload.hpp"
#include "model/workload/block_fs.hpp"
#include "model/workload/lifetime.hpp"
#include "model/workload/mooncake.hpp"

namespace kvfdp::workload {

// Files (on a BlockFs) and in-place writes (on the raw sink, below the BlockFs's range) under
// one write clock; classes by placement (the oracle's from the pre-pass).
class HostDisk {
public:
	// fs covers the sink's LBAs from raw_blocks x lbas_per_block on; below that is raw.
	HostDisk(BlockFs &fs, sim::BlockSink &sink, uint32_t lbas_per_block, uint64_t raw_blocks,
		 sim::Placement placement, LifetimeRecorder *rec,
		 const std::vector<uint8_t> *oracle);

	// A file of the given blocks; false (nothing written) when the filesystem is full.
	bool create(uint64_t blocks, uint8_t hint, uint64_t writer, FileExtents &out);
	void unlink(FileExtents &f);
	// Writes raw blocks [block, block + n) in place; *version is the data it replaces
	// (LifetimeRecorder::kNever: none) and becomes the new data's.
	void write_raw(uint64_t block, uint64_t n, uint8_t hint, uint64_t writer,
		       uint64_t &version);
	void begin_measurement() { sink_.begin_measurement(); }

	// Bytes written so far, files and in place.
	[[nodiscard]] uint64_t clock() const { return clock_; }
	[[nodiscard]] uint64_t raw_blocks() const { return raw_blocks_; }
	[[nodiscard]] uint64_t file_blocks() const { return fs_.total_blocks(); }

private:
	uint8_t classify(uint8_t hint, uint64_t version) const;
	uint64_t birth(uint64_t bytes);

	BlockFs &fs_;
	sim::BlockSink &sink_;
	uint32_t lbas_per_block_;
	uint64_t raw_blocks_;
	sim::Placement placement_;
	LifetimeRecorder *rec_;
	const std::vector<uint8_t> *oracle_;
	uint64_t versions_ = 0;
	uint64_t clock_ = 0;
};

struct HiCacheConfig {
	uint64_t page_blocks = 8;      // 4 KiB blocks per page file (after --kv-scale)
	uint32_t pages_per_block = 8;  // pages per 512-token Mooncake block (512 / page tokens)
	uint64_t cap_blocks = 0;       // the size cap (max_size), in 4 KiB blocks
	double eviction_ratio = 0.9;   // evict down to cap x this
	uint8_t hint = 0;              // the class its files are written with
	uint64_t writer = 1;
};

struct HiCacheStats {
	uint64_t requests = 0, lookups = 0, hits = 0;
	uint64_t pages_written = 0, pages_unlinked = 0, eviction_batches = 0;
	uint64_t write_failures = 0;  // the filesystem was full (other writers' room)
};

class HiCacheStore {
public:
	HiCacheStore(HostDisk &disk, HiCacheConfig cfg);

	// The request's pages (pass shifts its hash ids to fresh keys): the longest prefix on
	// disk is read (touched), then every page is set: written if absent, touched if present.
	void request(const MooncakeRequest &r, uint64_t id_shift);
	// Unlinked page keys in order, when recording (tests).
	void record_unlinks(std::vector<uint64_t> *out) { unlinks_ = out; }

	[[nodiscard]] const HiCacheStats &stats() const { return st_; }
	[[nodiscard]] uint64_t used_blocks() const { return used_; }
	// True once the cap has been reached (the first eviction batch).
	[[nodiscard]] bool full() const { return st_.eviction_batches > 0; }

private:
	struct Page {
		FileExtents file;
		std::list<uint64_t>::iterator lru;
	};
	void touch(Page &p, uint64_t key);
	void set(uint64_t key);
	void evict_for(uint64_t blocks);

	HostDisk &disk_;
	HiCacheConfig cfg_;
	HiCacheStats st_;
	std::unordered_map<uint64_t, Page> pages_;
	std::list<uint64_t> lru_;  // least recently used first
	uint64_t used_ = 0;
	std::vector<uint64_t> *unlinks_ = nullptr;
};

}  // namespace kvfdp::workload
