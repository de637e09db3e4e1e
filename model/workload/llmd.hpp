// vLLM's file-system KV tier with llm-d's PVC evictor (`--workload llmd`): vLLM's offloading
// connector stores each full 512-token KV block as one file named by the block's hash, and
// loads the longest stored prefix of a request; llm-d's evictor (llm-d-kv-cache,
// kv_connectors/pvc_evictor) deletes files when the filesystem's usage reaches a high mark,
// skipping files read recently, until usage is down to a low mark. docs/RESULTS.md
// "vLLM's file tier with llm-d's evictor" says what is assumed.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "model/sim/workload.hpp"
#include "model/workload/mooncake.hpp"

namespace kvfdp::workload {

// The order the evictor deletes in, where the engine has a choice: hash (the crawler's scan
// of the hash-named directories, processes/crawler.py), lru (least recently read or written
// first, strategies.py LRUPolicy) or fifo (oldest written first, strategies.py AgeTTLPolicy).
enum class LlmdOrder : uint8_t { hash, lru, fifo };

// The --evict-order names, in LlmdOrder order.
[[nodiscard]] const std::vector<std::string> &llmd_order_names();

// The usage marks as shares of the filesystem's capacity (llm-d: CLEANUP_THRESHOLD 85,
// TARGET_THRESHOLD 70, in percent).
struct LlmdMarks {
	double high = 0.85;
	double low = 0.70;
};

// Parses --evict-marks "HIGH,LOW" in percent of the capacity; the error names --evict-marks.
[[nodiscard]] Result<LlmdMarks> parse_llmd_marks(const std::string &text);

// The evictor over the store's files, keyed by their name's hash. Deletion starts when the
// blocks used reach the high mark and stops once they are at or below the low mark; a file
// read or written within the last `recent` bytes of the write clock is skipped. Where every
// file is recent, deletion waits until the first of them ages out.
class LlmdEvictor {
public:
	LlmdEvictor(LlmdOrder order, LlmdMarks marks, uint64_t capacity_blocks,
		    uint64_t recent_bytes);

	// A file of `blocks` stored under key at clock now.
	void stored(uint64_t key, uint64_t blocks, uint64_t now);
	// The file under key was read at clock now.
	void read(uint64_t key, uint64_t now);
	[[nodiscard]] bool contains(uint64_t key) const { return files_.count(key) != 0; }
	[[nodiscard]] uint64_t used_blocks() const { return used_; }
	[[nodiscard]] bool deleting() const { return deleting_; }
	// Files skipped because they were read recently, and times deletion found nothing to
	// delete, so far.
	[[nodiscard]] uint64_t skipped_recent() const { return skipped_; }
	[[nodiscard]] uint64_t stalls() const { return stalls_; }

	// Checks the marks at clock now and deletes what they ask for, calling del(key) for each
	// file before forgetting it; returns the files deleted.
	template <class Del> uint64_t run(uint64_t now, Del &&del)
	{
		if (!deleting_ && used_ >= high_blocks_)
			deleting_ = true;
		uint64_t n = 0;
		while (deleting_ && used_ > low_blocks_) {
			if (now < retry_at_)
				break;
			const std::optional<uint64_t> victim = next_victim(now);
			if (!victim) {
				++stalls_;
				break;
			}
			del(*victim);
			erase(*victim);
			++n;
		}
		if (used_ <= low_blocks_)
			deleting_ = false;
		return n;
	}

private:
	struct File {
		uint64_t blocks = 0;
		uint64_t last = 0;  // clock of the last read or write (atime)
		std::list<uint64_t>::iterator pos;
	};
	// The next file to delete in order, not recent at now; nullopt (and retry_at_ set to
	// when the first skipped file ages out) when there is none.
	[[nodiscard]] std::optional<uint64_t> next_victim(uint64_t now);
	void erase(uint64_t key);
	[[nodiscard]] bool recent(const File &f, uint64_t now) const
	{
		return now - f.last < recent_;
	}

	LlmdOrder order_;
	uint64_t high_blocks_, low_blocks_, recent_;
	std::map<uint64_t, File> files_;  // by name hash: the crawler's scan order
	std::list<uint64_t> queue_;       // lru: least recent first; fifo: oldest written first
	uint64_t cursor_ = 0;             // hash: where the crawler's scan goes on from
	uint64_t used_ = 0;
	bool deleting_ = false;
	uint64_t retry_at_ = 0;
	uint64_t skipped_ = 0, stalls_ = 0;
};

struct LlmdConfig {
	uint64_t block_bytes = 64ull << 20;  // one 512-token KV block (after --kv-scale)
	double utilisation = 1;              // the filesystem's share of the namespace
	LlmdMarks marks;
	LlmdOrder order = LlmdOrder::hash;
	// "Read recently": within this share of the filesystem's capacity written (llm-d:
	// FILE_ACCESS_TIME_THRESHOLD_MINUTES, 60, on the file's atime).
	double recent = 0.05;
};

struct LlmdStats {
	uint64_t requests = 0;
	uint64_t lookups = 0;         // full blocks asked for
	uint64_t hits = 0;            // loaded from the longest stored prefix
	uint64_t misses = 0;          // recomputed
	uint64_t evicted_misses = 0;  // misses on a block stored before and deleted since
	uint64_t stores = 0;          // files written
	uint64_t store_failures = 0;  // the filesystem was full: the block was not offloaded
	uint64_t deletions = 0;
	uint64_t skipped_recent = 0;
	uint64_t stalls = 0;
	uint64_t capacity_bytes = 0;  // the filesystem's
	uint64_t bytes_written = 0;
	uint64_t class_bytes[6] = {};
};

class LlmdWorkload : public sim::Workload {
public:
	LlmdWorkload(std::string name, std::vector<MooncakeRequest> trace, LlmdConfig cfg);

	[[nodiscard]] std::string name() const override { return name_; }
	[[nodiscard]] Result<void> run(sim::Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, sim::BlockSink &sink,
				       sim::Progress *progress) override;
	// hit_ratio, evictions, the marks and order, ... of the last run.
	[[nodiscard]] nlohmann::json extra() const override;
	[[nodiscard]] const LlmdStats &stats() const { return stats_; }

	// Checks the marks, the recent window and the block size against a capacity (bytes);
	// the one-line error names the parameter that does not fit.
	[[nodiscard]] static Result<void> validate(const LlmdConfig &cfg, uint64_t capacity_bytes);

private:
	std::string name_;
	std::vector<MooncakeRequest> trace_;
	LlmdConfig cfg_;
	LlmdStats stats_;
};

}  // namespace kvfdp::workload
