// vLLM's file tier with llm-d's evictor: the evictor's marks and orders, the prefix lookups,
// the none / hint / oracle classifiers.
#include "model/workload/llmd.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

#include "bpf/tag.h"
#include "placement/classes.hpp"
#include "model/workload/block_fs.hpp"
#include "model/workload/chunk_files.hpp"

namespace kvfdp::workload {

namespace {

Error usage(const std::string &what)
{
	return guidance_error(std::errc::invalid_argument, what);
}

// A block's file name hash: vLLM names files by the block's (sha256) hash, so their order
// is unrelated to the order they were written in. splitmix64 is a bijection: no collisions.
uint64_t name_hash(uint64_t id)
{
	uint64_t z = id + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// A percent in (0, 100], or false.
bool parse_percent(const std::string &s, double &out)
{
	char *end = nullptr;
	out = std::strtod(s.c_str(), &end);
	return !s.empty() && end == s.c_str() + s.size() && std::isfinite(out);
}

}  // namespace

const std::vector<std::string> &llmd_order_names()
{
	static const std::vector<std::string> names = {"hash", "lru", "fifo"};
	return names;
}

Result<LlmdMarks> parse_llmd_marks(const std::string &text)
{
	const size_t comma = text.find(',');
	double high = 0, low = 0;
	if (comma == std::string::npos || !parse_percent(text.substr(0, comma), high) ||
	    !parse_percent(text.substr(comma + 1), low))
		return usage("--evict-marks: '" + text +
			     "' is not HIGH,LOW in percent of the capacity, like 85,70");
	if (high > 100 || low <= 0)
		return usage("--evict-marks: " + text +
			     ": both marks must be in (0, 100] percent of the capacity");
	if (low >= high)
		return usage("--evict-marks: " + text +
			     ": the low mark (where deletion stops) must be below the high mark "
			     "(where it starts), like 85,70");
	return LlmdMarks{high / 100, low / 100};
}

LlmdEvictor::LlmdEvictor(LlmdOrder order, LlmdMarks marks, uint64_t capacity_blocks,
			 uint64_t recent_bytes)
    : order_(order), high_blocks_(static_cast<uint64_t>(
			     std::ceil(marks.high * static_cast<double>(capacity_blocks) - 1e-9))),
      low_blocks_(static_cast<uint64_t>(marks.low * static_cast<double>(capacity_blocks))),
      recent_(recent_bytes)
{
}

void LlmdEvictor::stored(uint64_t key, uint64_t blocks, uint64_t now)
{
	auto [it, fresh] = files_.try_emplace(key);
	File &f = it->second;
	if (!fresh) {
		used_ -= f.blocks;
		queue_.erase(f.pos);
	}
	f.blocks = blocks;
	f.last = now;
	f.pos = queue_.insert(queue_.end(), key);
	used_ += blocks;
}

void LlmdEvictor::read(uint64_t key, uint64_t now)
{
	auto it = files_.find(key);
	if (it == files_.end())
		return;
	it->second.last = now;
	if (order_ == LlmdOrder::lru)
		queue_.splice(queue_.end(), queue_, it->second.pos);
}

void LlmdEvictor::erase(uint64_t key)
{
	auto it = files_.find(key);
	used_ -= it->second.blocks;
	queue_.erase(it->second.pos);
	files_.erase(it);
}

std::optional<uint64_t> LlmdEvictor::next_victim(uint64_t now)
{
	uint64_t first_ages = UINT64_MAX;
	auto skip = [&](const File &f) {
		++skipped_;
		first_ages = std::min(first_ages, f.last + recent_);
	};
	auto none = [&]() -> std::optional<uint64_t> {
		retry_at_ = first_ages;
		return std::nullopt;
	};
	if (order_ == LlmdOrder::hash) {
		// The scan goes on from the cursor to the end of the hash space, then from its start.
		auto it = files_.lower_bound(cursor_);
		for (size_t seen = 0; seen < files_.size(); seen++, it++) {
			if (it == files_.end())
				it = files_.begin();
			if (recent(it->second, now)) {
				skip(it->second);
				continue;
			}
			cursor_ = it->first + 1;  // wraps to 0 after the last key
			return it->first;
		}
		return none();
	}
	for (uint64_t key : queue_) {
		const File &f = files_.find(key)->second;
		if (!recent(f, now))
			return key;
		skip(f);
		if (order_ == LlmdOrder::lru)
			break;  // the rest were used more recently still
	}
	return none();
}

namespace {

class Replay {
public:
	Replay(const LlmdConfig &cfg, BlockFs &fs, sim::Placement placement,
	       const std::vector<uint8_t> *oracle, LlmdStats &st)
	    : cfg_(cfg), fs_(fs), placement_(placement), oracle_(oracle), st_(st),
	      evictor_(cfg.order, cfg.marks, fs.total_blocks(),
		       static_cast<uint64_t>(cfg.recent * static_cast<double>(fs.total_blocks()) *
					     BlockFs::kBlockSize))
	{
	}

	// vLLM: the longest stored prefix of the request's full blocks is loaded (hits, read);
	// the rest is recomputed (misses) and each block not stored yet is written as a file.
	void request(const MooncakeRequest &req)
	{
		++st_.requests;
		const size_t full = std::min<size_t>(req.input_length / kMooncakeBlockTokens,
						     req.hash_ids.size());
		bool prefix = true;
		for (size_t i = 0; i < full; i++) {
			const uint64_t id = req.hash_ids[i];
			const uint64_t key = name_hash(id);
			++st_.lookups;
			const bool stored = evictor_.contains(key);
			if (prefix && stored) {
				++st_.hits;
				evictor_.read(key, fs_.clock());
				continue;
			}
			prefix = false;
			++st_.misses;
			if (stored)
				continue;  // vLLM's store skips blocks already offloaded
			const bool before = !ever_.insert(id).second;
			st_.evicted_misses += before ? 1 : 0;
			store(key, classify(i == 0 || before));
		}
	}

	void finish()
	{
		st_.skipped_recent = evictor_.skipped_recent();
		st_.stalls = evictor_.stalls();
		st_.bytes_written = fs_.counters().bytes_written;
		for (uint8_t c = 0; c < 6; ++c)
			st_.class_bytes[c] = fs_.class_bytes(c);
	}

private:
	// hint: a block every request starts with, or one stored before (evicted and asked for
	// again), is LONG; the rest MEDIUM.
	uint8_t classify(bool reused) const
	{
		switch (placement_) {
		case sim::Placement::none: return KVFDP_CLASS_NOT_SET;
		case sim::Placement::oracle: break;
		default: return reused ? KVFDP_CLASS_LONG : KVFDP_CLASS_MEDIUM;
		}
		const uint64_t v = fs_.next_version();
		return oracle_ && v < oracle_->size() ? (*oracle_)[v]
						      : uint8_t{KVFDP_CLASS_EXTREME};
	}

	void store(uint64_t key, uint8_t cls)
	{
		FileExtents f;
		if (!fs_.create(cfg_.block_bytes, cls, f, kWriter)) {
			++st_.store_failures;
			return;
		}
		++st_.stores;
		evictor_.stored(key, f.blocks, fs_.clock());
		files_.emplace(key, std::move(f));
		st_.deletions += evictor_.run(fs_.clock(), [&](uint64_t victim) {
			if (!measuring_) {
				fs_.begin_measurement();  // the first deletion ends the warm-up
				measuring_ = true;
			}
			auto it = files_.find(victim);
			fs_.unlink(it->second);
			files_.erase(it);
		});
	}

	static constexpr uint64_t kWriter = 1;  // the engine: one writer
	const LlmdConfig &cfg_;
	BlockFs &fs_;
	sim::Placement placement_;
	const std::vector<uint8_t> *oracle_;
	LlmdStats &st_;
	LlmdEvictor evictor_;
	std::unordered_map<uint64_t, FileExtents> files_;  // by name hash
	std::unordered_set<uint64_t> ever_;                // block ids stored at least once
	bool measuring_ = false;
};

}  // namespace

LlmdWorkload::LlmdWorkload(std::string name, std::vector<MooncakeRequest> trace, LlmdConfig cfg)
    : name_(std::move(name)), trace_(std::move(trace)), cfg_(cfg)
{
}

Result<void> LlmdWorkload::validate(const LlmdConfig &cfg, uint64_t capacity_bytes)
{
	const LlmdMarks &m = cfg.marks;
	if (!(m.low > 0 && m.low < m.high && m.high <= 1))
		return usage("--evict-marks: the marks must satisfy 0 < low < high <= 100 percent");
	if (!(cfg.utilisation > 0 && cfg.utilisation <= 1))
		return usage("--util: the filesystem's share of the namespace must be in (0, 1]");
	if (!(cfg.recent >= 0))
		return usage("--evict-recent: want a share of the capacity written, 0 or more");
	if (!(cfg.recent < m.low)) {
		char buf[200];
		std::snprintf(buf, sizeof buf,
			      "--evict-recent: %g of the capacity does not fit below the low mark "
			      "(%g): the evictor could never get there; give less than %g",
			      cfg.recent, m.low, m.low);
		return usage(buf);
	}
	const auto fs_blocks = static_cast<uint64_t>(
		static_cast<double>(capacity_bytes / BlockFs::kBlockSize) * cfg.utilisation);
	const uint64_t need = 2 * BlockFs::blocks_for(cfg.block_bytes);
	if (static_cast<double>(fs_blocks) * m.high < static_cast<double>(need)) {
		char buf[220];
		std::snprintf(buf, sizeof buf,
			      "--evict-marks: the high mark (%g%% of a %llu-byte filesystem) holds "
			      "fewer than 2 files of %llu bytes; raise --capacity or the marks, or "
			      "lower --kv-scale",
			      m.high * 100,
			      static_cast<unsigned long long>(fs_blocks * BlockFs::kBlockSize),
			      static_cast<unsigned long long>(need / 2 * BlockFs::kBlockSize));
		return usage(buf);
	}
	return ok();
}

Result<void> LlmdWorkload::run(sim::Placement placement, uint64_t logical_lbas, uint32_t lba_size,
			       sim::BlockSink &sink, sim::Progress *progress)
{
	KVFDP_TRY(validate(cfg_, logical_lbas * lba_size));
	// The filesystem spans the first utilisation share of the namespace.
	const auto fs_lbas =
		static_cast<uint64_t>(static_cast<double>(logical_lbas) * cfg_.utilisation);
	return run_passes(placement, sink, progress,
			  [&](sim::BlockSink &s, LifetimeRecorder *rec,
			      const std::vector<uint8_t> *oracle,
			      sim::Progress *p) -> Result<void> {
				  auto fs = BlockFs::make(fs_lbas, lba_size, s, rec);
				  if (!fs)
					  return std::move(fs).error();
				  stats_ = LlmdStats{};
				  stats_.capacity_bytes = fs->total_blocks() * BlockFs::kBlockSize;
				  Replay r(cfg_, *fs, placement, oracle, stats_);
				  for (size_t i = 0; i < trace_.size(); ++i) {
					  r.request(trace_[i]);
					  if (p && (i % 256 == 0 || i + 1 == trace_.size()))
						  p->update(static_cast<double>(i + 1) /
							    static_cast<double>(trace_.size()));
				  }
				  r.finish();
				  return ok();
			  });
}

nlohmann::json LlmdWorkload::extra() const
{
	const auto &s = stats_;
	nlohmann::json j;
	j["hit_ratio"] =
		s.lookups ? static_cast<double>(s.hits) / static_cast<double>(s.lookups) : 0.0;
	j["requests"] = s.requests;
	j["lookups"] = s.lookups;
	j["hits"] = s.hits;
	j["misses"] = s.misses;
	j["evicted_misses"] = s.evicted_misses;
	j["stores"] = s.stores;
	j["store_failures"] = s.store_failures;
	j["evictions"] = s.deletions;
	j["skipped_recent"] = s.skipped_recent;
	j["stalls"] = s.stalls;
	j["store_capacity_bytes"] = s.capacity_bytes;
	j["bytes_written"] = s.bytes_written;
	j["evict_order"] = llmd_order_names()[static_cast<size_t>(cfg_.order)];
	char marks[48];
	std::snprintf(marks, sizeof marks, "%g,%g", cfg_.marks.high * 100, cfg_.marks.low * 100);
	j["evict_marks"] = marks;
	j["evict_recent"] = cfg_.recent;
	j["block_bytes"] = cfg_.block_bytes;
	j["class_bytes"] = class_bytes_json(s.class_bytes);
	return j;
}

}  // namespace kvfdp::workload
