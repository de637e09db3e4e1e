// The chunk store replay: lookups, LRU / FIFO / FIFO2 eviction, and the none / hint / oracle
// classifiers.
#include "model/workload/chunk_store.hpp"

#include <list>
#include <unordered_map>

#include "bpf/tag.h"
#include "placement/classes.hpp"
#include "model/workload/block_fs.hpp"
#include "model/workload/null_sink.hpp"

namespace kvfdp::workload {

namespace {

// What hint knows about a block when it writes it. The first three are learned groups.
enum Group : uint8_t { kFirstTurnBody = 0, kContinuingBody = 1, kTail = 2, kShared = 3 };

struct Chunk {
	uint64_t hash = 0;
	FileExtents file;
	Group group = kShared;
	uint8_t cls = 0;      // the class it was written with (a fifo2 rewrite keeps it)
	bool reused = false;  // hit since it was (re)written
};

// hint's online estimate: of the chunks of each group evicted so far, how many were hit
// at least once while cached. Until a group has kWarmup evictions it counts as reused.
class ReuseLearner {
public:
	static constexpr uint64_t kWarmup = 64;
	void evicted(Group g, bool reused)
	{
		if (g >= kShared)
			return;
		++evicted_[g];
		reused_[g] += reused ? 1 : 0;
	}
	[[nodiscard]] double rate(Group g) const
	{
		if (g >= kShared || evicted_[g] < kWarmup)
			return 1.0;
		return static_cast<double>(reused_[g]) / static_cast<double>(evicted_[g]);
	}

private:
	uint64_t evicted_[3] = {};
	uint64_t reused_[3] = {};
};

class Replay {
public:
	// writer: the id its files are written with; ends_warmup: its first eviction ends the
	// warm-up (a store alone on the device), else the caller ends it.
	Replay(const ChunkStoreConfig &cfg, BlockFs &fs, uint64_t cap_blocks, ChunkStoreStats &st,
	       uint64_t writer = 0, bool ends_warmup = true)
	    : cfg_(cfg), fs_(fs), cap_blocks_(cap_blocks), st_(st), writer_(writer),
	      ends_warmup_(ends_warmup)
	{
	}

	// Blocks this store's chunks hold (the whole BlockFs's when it is alone on it).
	[[nodiscard]] uint64_t used_blocks() const { return used_; }
	void set_writer(uint64_t writer) { writer_ = writer; }

	void request(const MooncakeRequest &req, sim::Placement placement,
		     const std::vector<uint8_t> *oracle)
	{
		++st_.requests;
		const auto &ids = req.hash_ids;
		// Leading blocks already cached: the prefix this request shares with earlier ones.
		size_t cached_prefix = 0;
		while (cached_prefix < ids.size() && index_.count(ids[cached_prefix]))
			++cached_prefix;
		const bool continuing = cached_prefix > cfg_.long_positions;
		const bool partial_tail = req.input_length % kMooncakeBlockTokens != 0;
		for (size_t i = 0; i < ids.size(); ++i) {
			const uint64_t h = ids[i];
			++st_.lookups;
			const uint32_t refs = ++refs_[h];
			auto it = index_.find(h);
			if (it != index_.end()) {
				++st_.hits;
				const bool first_hit = !it->second->reused;
				it->second->reused = true;
				if (cfg_.evict == EvictPolicy::lru)
					lru_.splice(lru_.begin(), lru_, it->second);
				if (first_hit && cfg_.promote_on_hit &&
				    placement == sim::Placement::hint &&
				    it->second->group != kShared)
					promote(it->second);
				continue;
			}
			++st_.misses;
			Group g = kShared;
			if (i >= cfg_.long_positions && refs < cfg_.prefix_refs)
				g = (i + 1 == ids.size() && partial_tail) ? kTail
				    : continuing                          ? kContinuingBody
									  : kFirstTurnBody;
			write_chunk(h, g, classify(placement, g, oracle));
		}
	}

	void learned(double out[3]) const
	{
		for (int g = 0; g < 3; ++g)
			out[g] = learner_.rate(static_cast<Group>(g));
	}

private:
	uint8_t classify(sim::Placement placement, Group g,
			 const std::vector<uint8_t> *oracle) const
	{
		switch (placement) {
		case sim::Placement::none: return KVFDP_CLASS_NOT_SET;
		case sim::Placement::hint:
		case sim::Placement::writer:  // simulate runs the workload with hint for these
		case sim::Placement::learned:
			if (g == kShared)
				return KVFDP_CLASS_LONG;
			return learner_.rate(g) >= cfg_.medium_reuse ? KVFDP_CLASS_MEDIUM
								     : KVFDP_CLASS_SHORT;
		case sim::Placement::oracle: break;
		}
		uint64_t v = fs_.next_version();
		return oracle && v < oracle->size() ? (*oracle)[v] : uint8_t{KVFDP_CLASS_EXTREME};
	}

	// Rewrites a cached chunk (at the LRU front) as a LONG file in place of the old one.
	void promote(std::list<Chunk>::iterator c)
	{
		learner_.evicted(c->group, true);
		unlink(c->file);
		c->group = kShared;
		bool created = create(KVFDP_CLASS_LONG, c->file);
		(void)created;  // the blocks just freed are enough
		++st_.promotions;
		++st_.chunks_written;
	}

	void evict_lru()
	{
		if (st_.evictions == 0 && ends_warmup_)
			fs_.begin_measurement();  // the store is full: the warm-up ends here
		Chunk &c = lru_.back();
		if (cfg_.evict == EvictPolicy::fifo2 && c.reused) {
			// Second chance: rewrite it as the newest chunk (a new file, same class).
			learner_.evicted(c.group, true);
			unlink(c.file);
			bool created = create(c.cls, c.file);
			(void)created;  // the blocks just freed are enough
			c.reused = false;
			lru_.splice(lru_.begin(), lru_, std::prev(lru_.end()));
			++st_.reinserts;
			++st_.chunks_written;
			return;
		}
		learner_.evicted(c.group, c.reused);
		unlink(c.file);
		index_.erase(c.hash);
		lru_.pop_back();
		++st_.evictions;
	}

	void write_chunk(uint64_t h, Group g, uint8_t cls)
	{
		const uint64_t need = BlockFs::blocks_for(cfg_.chunk_bytes);
		while (!lru_.empty() && (used_ + need > cap_blocks_ || fs_.free_blocks() < need))
			evict_lru();
		lru_.push_front(Chunk{h, {}, g, cls, false});
		// The caller checked that one chunk fits in an empty store.
		bool created = create(cls, lru_.front().file);
		(void)created;
		index_[h] = lru_.begin();
		++st_.chunks_written;
	}

	// A chunk file of this store, written as its writer, counted in used_.
	bool create(uint8_t cls, FileExtents &file)
	{
		const bool created = fs_.create(cfg_.chunk_bytes, cls, file, writer_);
		if (created)
			used_ += file.blocks;
		return created;
	}
	void unlink(FileExtents &file)
	{
		used_ -= file.blocks;
		fs_.unlink(file);
	}

	const ChunkStoreConfig &cfg_;
	BlockFs &fs_;
	uint64_t cap_blocks_;
	ChunkStoreStats &st_;
	uint64_t writer_;
	bool ends_warmup_;
	uint64_t used_ = 0;
	std::list<Chunk> lru_;  // front = most recently used (lru) or written (fifo, fifo2)
	std::unordered_map<uint64_t, std::list<Chunk>::iterator> index_;
	std::unordered_map<uint64_t, uint32_t> refs_;  // requests that referenced each hash
	ReuseLearner learner_;
};

Result<void> replay_pass(const std::vector<MooncakeRequest> &trace, const ChunkStoreConfig &cfg,
			 sim::Placement placement, const std::vector<uint8_t> *oracle,
			 uint64_t logical_lbas, uint32_t lba_size, sim::BlockSink &sink,
			 LifetimeRecorder *recorder, sim::Progress *progress, ChunkStoreStats &st)
{
	auto fs = BlockFs::make(logical_lbas, lba_size, sink, recorder);
	if (!fs)
		return std::move(fs).error();
	st = ChunkStoreStats{};
	const std::string chunk = "a " + std::to_string(cfg.chunk_bytes) + "-byte chunk";
	auto cap_blocks = store_blocks(*fs, cfg, cfg.chunk_bytes, chunk.c_str(), st);
	if (!cap_blocks)
		return std::move(cap_blocks).error();
	Replay r(cfg, *fs, *cap_blocks, st);
	for (size_t i = 0; i < trace.size(); ++i) {
		r.request(trace[i], placement, oracle);
		if (progress && (i % 256 == 0 || i + 1 == trace.size()))
			progress->update(static_cast<double>(i + 1) /
					 static_cast<double>(trace.size()));
	}
	finish_stats(*fs, st);
	st.fragmented_chunks = fs->counters().fragmented_files;
	for (uint8_t c = 0; c < 6; ++c)
		st.class_bytes[c] = fs->class_bytes(c);
	r.learned(st.learned_reuse);
	return ok();
}

}  // namespace

struct ChunkEngine::Impl {
	Impl(const ChunkStoreConfig &c, BlockFs &fs, uint64_t cap_blocks, uint64_t writer)
	    : cfg(c), replay(cfg, fs, cap_blocks, stats, writer, false)
	{
	}
	ChunkStoreConfig cfg;
	ChunkStoreStats stats;
	Replay replay;
};

ChunkEngine::ChunkEngine(const ChunkStoreConfig &cfg, BlockFs &fs, uint64_t cap_blocks,
			 uint64_t writer)
    : impl_(std::make_unique<Impl>(cfg, fs, cap_blocks, writer))
{
}

ChunkEngine::~ChunkEngine() = default;

void ChunkEngine::set_writer(uint64_t writer)
{
	impl_->replay.set_writer(writer);
}

void ChunkEngine::request(const MooncakeRequest &req, sim::Placement placement,
			  const std::vector<uint8_t> *oracle)
{
	impl_->replay.request(req, placement, oracle);
}

const ChunkStoreStats &ChunkEngine::stats() const
{
	return impl_->stats;
}

uint64_t ChunkEngine::used_blocks() const
{
	return impl_->replay.used_blocks();
}

ChunkStoreWorkload::ChunkStoreWorkload(std::string name, std::vector<MooncakeRequest> trace,
				       ChunkStoreConfig cfg)
    : name_(std::move(name)), trace_(std::move(trace)), cfg_(cfg)
{
}

Result<void> ChunkStoreWorkload::run(sim::Placement placement, uint64_t logical_lbas,
				     uint32_t lba_size, sim::BlockSink &sink,
				     sim::Progress *progress)
{
	return run_passes(placement, sink, progress,
			  [&](sim::BlockSink &s, LifetimeRecorder *rec,
			      const std::vector<uint8_t> *oracle, sim::Progress *p) {
				  return replay_pass(trace_, cfg_, placement, oracle, logical_lbas,
						     lba_size, s, rec, p, stats_);
			  });
}

nlohmann::json ChunkStoreWorkload::extra() const
{
	const auto &s = stats_;
	nlohmann::json j;
	j["hit_ratio"] =
		s.lookups ? static_cast<double>(s.hits) / static_cast<double>(s.lookups) : 0.0;
	add_chunk_file_json(j, s);
	j["promotions"] = s.promotions;
	static const char *kEvict[3] = {"lru", "fifo", "fifo2"};
	j["evict"] = kEvict[static_cast<int>(cfg_.evict)];
	j["reinserts"] = s.reinserts;
	j["requests"] = s.requests;
	j["lookups"] = s.lookups;
	j["hits"] = s.hits;
	j["chunk_bytes"] = cfg_.chunk_bytes;
	j["fragmented_chunks"] = s.fragmented_chunks;
	j["class_bytes"] = class_bytes_json(s.class_bytes);
	return j;
}

}  // namespace kvfdp::workload
