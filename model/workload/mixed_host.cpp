// The mixed host: a KVBM-like slot file, HiCache page files and four other writers, in time order.
#include "model/workload/mixed_host.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <list>
#include <memory>
#include <unordered_map>

#include <CLI/CLI.hpp>

#include "bpf/tag.h"
#include "model/workload/chunk_files.hpp"
#include "model/workload/presets.hpp"

namespace kvfdp::workload {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Error bad(const std::string &what)
{
	return guidance_error(std::errc::invalid_argument, what);
}

enum Writer : uint64_t { kA = 1, kB, kPrompt, kIndex, kLogs, kWeights };

// Blocks of the prompt cache's index for n entries.
uint64_t index_blocks(uint64_t n)
{
	return 1 + n / 64;
}

// The BlockFs's view of the LBAs above the slot file.
class OffsetSink final : public sim::BlockSink {
public:
	OffsetSink(sim::BlockSink &to, uint64_t offset) : to_(to), offset_(offset) {}
	void write(uint64_t slba, uint64_t nlb, uint8_t cls, uint64_t writer) override
	{
		to_.write(slba + offset_, nlb, cls, writer);
	}
	void deallocate(uint64_t slba, uint64_t nlb) override
	{
		to_.deallocate(slba + offset_, nlb);
	}

private:
	sim::BlockSink &to_;
	uint64_t offset_;
};

uint64_t scaled_blocks(double unscaled_bytes, double scale)
{
	const auto b = static_cast<uint64_t>(std::llround(unscaled_bytes * scale / 4096.0));
	return std::max<uint64_t>(1, b);
}

// The two engines' requests in time order: engine e replays the trace at its speed, looping
// with hash ids shifted past the previous pass's; the run ends after one pass of the slowest.
class Replay {
public:
	Replay(const std::vector<MooncakeRequest> &trace, std::vector<double> speeds)
	    : trace_(trace), speeds_(std::move(speeds)), next_(speeds_.size(), 0)
	{
		const double t0 = static_cast<double>(trace.front().timestamp_ms) / 1000.0;
		for (const MooncakeRequest &r : trace) {
			rel_.push_back(static_cast<double>(r.timestamp_ms) / 1000.0 - t0);
			for (uint64_t h : r.hash_ids)
				span_ = std::max(span_, h + 1);
		}
		const double mean_gap =
			trace.size() > 1 ? rel_.back() / static_cast<double>(trace.size() - 1) : 1;
		period_ = rel_.back() + std::max(mean_gap, 1e-3);
		end_ = period_ / *std::min_element(speeds_.begin(), speeds_.end());
	}

	[[nodiscard]] double end() const { return end_; }
	// When engine e's next request comes.
	[[nodiscard]] double when(size_t e) const
	{
		const uint64_t n = next_[e];
		const auto pass = static_cast<double>(n / trace_.size());
		return (pass * period_ + rel_[n % trace_.size()]) / speeds_[e];
	}
	// The engine whose request comes first, or -1 past the end.
	[[nodiscard]] int first() const
	{
		int best = -1;
		double t = end_;
		for (size_t e = 0; e < speeds_.size(); e++)
			if (when(e) < t) {
				t = when(e);
				best = static_cast<int>(e);
			}
		return best;
	}
	// Engine e's next request and the shift of its hash ids; advances e.
	const MooncakeRequest &take(size_t e, uint64_t &shift)
	{
		const uint64_t n = next_[e]++;
		shift = n / trace_.size() * span_;
		return trace_[n % trace_.size()];
	}

private:
	const std::vector<MooncakeRequest> &trace_;
	std::vector<double> speeds_;
	std::vector<uint64_t> next_;
	std::vector<double> rel_;
	double period_ = 1, end_ = 0;
	uint64_t span_ = 1;
};

// How the device is divided.
struct Layout {
	uint64_t total = 0;  // 4 KiB blocks of the device
	uint64_t a_page = 0, a_slots = 0, b_page = 0, b_cap = 0;
	uint64_t weights = 0, log_file = 0, reserve = 0;
	double append_every = kInf;  // seconds between 4 KiB log appends
	[[nodiscard]] uint64_t a_blocks() const { return a_page * a_slots; }
};

std::vector<double> speeds_of(const MixedHostConfig &c)
{
	return c.engine_a ? std::vector<double>{c.a_speed, 1.0} : std::vector<double>{1.0};
}

uint64_t prompt_blocks(const MixedHostConfig &c, const MooncakeRequest &r)
{
	return scaled_blocks(static_cast<double>(r.input_length * c.bytes_per_token), c.scale);
}

// The most prompt-cache blocks alive at once, with two copies of its index (a dry pass).
uint64_t transient_peak(const MixedHostConfig &c, const std::vector<MooncakeRequest> &trace)
{
	if (!c.engine_a)
		return 0;
	Replay rp(trace, speeds_of(c));
	std::deque<std::pair<double, uint64_t>> prompts;
	uint64_t alive = 0, peak = 0, count = 0;
	auto expire = [&](std::deque<std::pair<double, uint64_t>> &q, double now) {
		while (!q.empty() && q.front().first <= now) {
			alive -= q.front().second;
			q.pop_front();
		}
	};
	for (int e = rp.first(); e >= 0; e = rp.first()) {
		const double now = rp.when(static_cast<size_t>(e));
		uint64_t shift = 0;
		const MooncakeRequest &r = rp.take(static_cast<size_t>(e), shift);
		expire(prompts, now);
		if (c.prompt_every && count++ % c.prompt_every == 0) {
			const uint64_t b = prompt_blocks(c, r);
			prompts.emplace_back(now + c.prompt_ttl_s, b);
			alive += b;
		}
		peak = std::max(peak, alive + 2 * index_blocks(prompts.size()));
	}
	return peak;
}

Result<Layout> layout(const MixedHostConfig &c, const std::vector<MooncakeRequest> &trace,
		      uint64_t capacity_bytes)
{
	if (c.page_tokens_b == 0 || c.page_tokens_b > kMooncakeBlockTokens ||
	    kMooncakeBlockTokens % c.page_tokens_b)
		return bad("--hicache-page-tokens: want a divisor of 512, like 64");
	if (!(c.eviction_ratio > 0 && c.eviction_ratio <= 1))
		return bad("--hicache-evict-ratio: want a fraction in (0, 1], like 0.9");
	if (!(c.utilisation > 0 && c.utilisation <= 1))
		return bad("--util: want a fraction in (0, 1]");
	if (c.engine_a) {
		if (c.page_tokens_a == 0 || c.page_tokens_a > kMooncakeBlockTokens ||
		    kMooncakeBlockTokens % c.page_tokens_a)
			return bad("--mixed-a-page-tokens: want a divisor of 512, like 64");
		if (!(c.a_speed > 0 && c.a_speed <= 1000))
			return bad("--mixed-a-speed: want a speed factor in (0, 1000], like 3");
		if (!(c.a_share > 0 && c.a_share < 1))
			return bad("--mixed-a-share: want a fraction in (0, 1), like 0.5");
		if (c.min_hits_a < 1 || c.min_hits_a > 1000)
			return bad("--mixed-a-min-hits: want 1 to 1000 sightings");
		if (!(c.prompt_ttl_s > 0 && c.prompt_ttl_s <= 1e7))
			return bad("--mixed-prompt-ttl-s: want a positive number of seconds");
		if (!(c.swap_s > 0))
			return bad("--host-swap-s: want a positive number of seconds");
		if (c.log_rate && c.log_file_bytes == 0)
			return bad("--host-log-file: want a positive size");
	}
	if (trace.empty())
		return bad("--kv-trace: the trace has no requests");
	Layout l;
	l.total = capacity_bytes / BlockFs::kBlockSize;
	const auto budget =
		static_cast<uint64_t>(static_cast<long double>(l.total) * c.utilisation);
	const double tok = static_cast<double>(c.bytes_per_token);
	l.b_page = scaled_blocks(tok * c.page_tokens_b, c.scale);
	if (!c.engine_a) {
		l.b_cap = budget;
		if (l.b_cap < 2 * l.b_page)
			return bad(
				"--util: the HiCache cap holds fewer than 2 pages of " +
				std::to_string(l.b_page * 4) +
				" KiB; raise --util or --capacity, or lower --hicache-page-tokens");
		return l;
	}
	l.a_page = scaled_blocks(tok * c.page_tokens_a, c.scale);
	if (c.weights_bytes)
		l.weights = scaled_blocks(static_cast<double>(c.weights_bytes), c.scale);
	if (c.log_rate) {
		l.log_file = scaled_blocks(static_cast<double>(c.log_file_bytes), c.scale);
		l.append_every = 4096.0 / (static_cast<double>(c.log_rate) * c.scale);
	}
	l.reserve = 2 * l.weights + (c.log_rate ? (c.log_keep + 1) * l.log_file + 1 : 0) +
		    transient_peak(c, trace);
	if (l.reserve >= budget)
		return bad("--util: the prompt cache, logs and weights need " +
			   std::to_string(l.reserve * 4 >> 10) +
			   " MiB at once, which leaves the engines no room; raise --util or "
			   "--capacity, or lower --host-weights / --mixed-prompt-every");
	const uint64_t room = budget - l.reserve;
	l.a_slots = static_cast<uint64_t>(static_cast<double>(room) * c.a_share) / l.a_page;
	if (l.a_slots < 2)
		return bad("--mixed-a-share: engine A's slot file holds fewer than 2 pages of " +
			   std::to_string(l.a_page * 4) + " KiB; raise it");
	l.b_cap = room - l.a_blocks();
	if (l.b_cap < 2 * l.b_page)
		return bad("--mixed-a-share: engine B's cap holds fewer than 2 pages of " +
			   std::to_string(l.b_page * 4) + " KiB; lower it");
	return l;
}

// Engine A: KVBM's disk tier, slots of one page in one preallocated file at raw block 0.
class SlotFile {
public:
	SlotFile(HostDisk &disk, const MixedHostConfig &c, const Layout &l, MixedHostStats &st)
	    : disk_(disk), page_(l.a_page), ppb_(kMooncakeBlockTokens / c.page_tokens_a),
	      min_hits_(c.min_hits_a), key_(l.a_slots, kFree),
	      version_(l.a_slots, LifetimeRecorder::kNever), where_(l.a_slots), st_(st)
	{
		st_.a_slots = l.a_slots;
		st_.a_slot_blocks = l.a_page;
	}

	void request(const MooncakeRequest &r, uint64_t shift)
	{
		st_.a_requests++;
		for (uint64_t h : r.hash_ids) {
			const uint64_t block = h + shift;
			bool missing = false;
			for (uint64_t p = 0; p < ppb_; p++) {
				auto it = slot_of_.find(block * ppb_ + p);
				st_.a_lookups++;
				if (it == slot_of_.end()) {
					missing = true;
					continue;
				}
				st_.a_hits++;
				touch(it->second);
			}
			if (!missing || ++seen_[block] < min_hits_)
				continue;
			for (uint64_t p = 0; p < ppb_; p++)
				if (!slot_of_.count(block * ppb_ + p))
					put(block * ppb_ + p);
		}
	}

	[[nodiscard]] bool full() const { return filled_ == key_.size(); }

private:
	static constexpr uint64_t kFree = std::numeric_limits<uint64_t>::max();

	void touch(uint32_t s) { lru_.splice(lru_.end(), lru_, where_[s]); }

	void put(uint64_t key)
	{
		uint32_t s;
		if (filled_ < key_.size()) {
			s = static_cast<uint32_t>(filled_++);
			where_[s] = lru_.insert(lru_.end(), s);
		} else {
			s = lru_.front();
			slot_of_.erase(key_[s]);
			st_.a_overwrites++;
			touch(s);
		}
		key_[s] = key;
		slot_of_[key] = s;
		disk_.write_raw(s * page_, page_, KVFDP_CLASS_MEDIUM, kA, version_[s]);
		st_.a_pages_written++;
		st_.bytes[kA - 1] += page_ * BlockFs::kBlockSize;
	}

	HostDisk &disk_;
	uint64_t page_, ppb_;
	uint32_t min_hits_;
	std::vector<uint64_t> key_, version_;
	std::vector<std::list<uint32_t>::iterator> where_;
	std::list<uint32_t> lru_;  // slots, least recently used first
	std::unordered_map<uint64_t, uint32_t> slot_of_;
	std::unordered_map<uint64_t, uint32_t> seen_;  // sightings per Mooncake block
	uint64_t filled_ = 0;
	MixedHostStats &st_;
};

// One run of the host on a HostDisk.
class MixedRun {
public:
	MixedRun(const MixedHostConfig &c, const Layout &l,
		 const std::vector<MooncakeRequest> &trace, HostDisk &disk, MixedHostStats &st)
	    : c_(c), l_(l), trace_(trace), disk_(disk), st_(st)
	{
		HiCacheConfig h;
		h.page_blocks = l.b_page;
		h.pages_per_block = kMooncakeBlockTokens / c.page_tokens_b;
		h.cap_blocks = l.b_cap;
		h.eviction_ratio = c.eviction_ratio;
		h.hint = KVFDP_CLASS_MEDIUM;
		h.writer = c.engine_a ? kB : 1;
		b_ = std::make_unique<HiCacheStore>(disk, h);
		if (c.engine_a)
			a_ = std::make_unique<SlotFile>(disk, c, l, st);
		st_.b_cap_bytes = l.b_cap * BlockFs::kBlockSize;
		st_.reserve_bytes = l.reserve * BlockFs::kBlockSize;
	}

	void run(sim::Progress *progress)
	{
		Replay rp(trace_, speeds_of(c_));
		const double end = rp.end();
		double next_append = c_.engine_a ? 0.0 : kInf;
		double next_swap = c_.engine_a && l_.weights ? 0.0 : kInf;
		uint64_t events = 0, requests = 0;
		for (;;) {
			const int e = rp.first();
			const double t_req = e >= 0 ? rp.when(static_cast<size_t>(e)) : kInf;
			const double now = std::min({t_req, next_append, next_swap});
			if (!(now < end))
				break;
			expire_prompts(now);
			if (now == next_swap) {
				swap_weights();
				next_swap += c_.swap_s;
			} else if (now == next_append) {
				append_log();
				next_append += l_.append_every;
			} else {
				uint64_t shift = 0;
				const MooncakeRequest &r = rp.take(static_cast<size_t>(e), shift);
				transients(r, now, requests++);
				if (c_.engine_a && e == 0)
					a_->request(r, shift);
				else
					b_->request(r, shift);
				if (!measuring_ && b_->full() && (!a_ || a_->full())) {
					disk_.begin_measurement();
					measuring_ = true;
					st_.measured_from_s = now;
				}
			}
			st_.sim_seconds = now;
			if (progress && ++events % 4096 == 0)
				progress->update(now / end);
		}
		if (!measuring_)
			disk_.begin_measurement();
		st_.b = b_->stats();
		st_.bytes[kB - 1] = st_.b.pages_written * l_.b_page * BlockFs::kBlockSize;
		if (progress)
			progress->update(1.0);
	}

private:
	using Queue = std::deque<std::pair<double, FileExtents>>;

	bool create(uint64_t blocks, uint8_t hint, uint64_t writer, FileExtents &f)
	{
		if (!disk_.create(blocks, hint, writer, f)) {
			st_.dropped++;
			return false;
		}
		st_.bytes[writer - 1] += blocks * BlockFs::kBlockSize;
		return true;
	}

	// The prompt cache's index after a change: a new file, then the old one unlinked.
	void rewrite_index()
	{
		FileExtents next;
		if (!create(index_blocks(prompts_.size()), KVFDP_CLASS_SHORT, kIndex, next))
			return;
		if (index_.blocks)
			disk_.unlink(index_);
		index_ = std::move(next);
	}

	void expire_prompts(double now)
	{
		bool changed = false;
		while (!prompts_.empty() && prompts_.front().first <= now) {
			if (prompts_.front().second.blocks)
				disk_.unlink(prompts_.front().second);
			prompts_.pop_front();
			changed = true;
		}
		if (changed)
			rewrite_index();
	}

	// The prompt cache's save of a request.
	void transients(const MooncakeRequest &r, double now, uint64_t n)
	{
		if (!c_.engine_a || !c_.prompt_every || n % c_.prompt_every)
			return;
		prompts_.push_back({now + c_.prompt_ttl_s, FileExtents{}});
		create(prompt_blocks(c_, r), KVFDP_CLASS_LONG, kPrompt, prompts_.back().second);
		rewrite_index();
	}

	void append_log()
	{
		FileExtents piece;
		if (!create(1, KVFDP_CLASS_NOT_SET, kLogs, piece))
			return;
		log_.push_back(std::move(piece));
		if (log_.size() < l_.log_file)
			return;
		rotated_.push_back(std::move(log_));
		log_.clear();
		while (rotated_.size() > c_.log_keep) {
			for (FileExtents &f : rotated_.front())
				disk_.unlink(f);
			rotated_.pop_front();
		}
	}

	void swap_weights()
	{
		FileExtents next;
		if (!create(l_.weights, KVFDP_CLASS_EXTREME, kWeights, next))
			return;
		if (weights_.blocks)
			disk_.unlink(weights_);
		weights_ = std::move(next);
	}

	const MixedHostConfig &c_;
	const Layout &l_;
	const std::vector<MooncakeRequest> &trace_;
	HostDisk &disk_;
	MixedHostStats &st_;
	std::unique_ptr<HiCacheStore> b_;
	std::unique_ptr<SlotFile> a_;
	Queue prompts_;
	FileExtents index_;
	std::vector<FileExtents> log_;
	std::deque<std::vector<FileExtents>> rotated_;
	FileExtents weights_;
	bool measuring_ = false;
};

}  // namespace

MixedHostWorkload::MixedHostWorkload(std::vector<MooncakeRequest> trace, MixedHostConfig cfg)
    : trace_(std::move(trace)), cfg_(cfg)
{
}

Result<void> MixedHostWorkload::validate(const MixedHostConfig &cfg,
					 const std::vector<MooncakeRequest> &trace,
					 uint64_t capacity_bytes)
{
	auto l = layout(cfg, trace, capacity_bytes);
	if (!l)
		return std::move(l).error();
	return ok();
}

Result<void> MixedHostWorkload::run(sim::Placement placement, uint64_t logical_lbas,
				    uint32_t lba_size, sim::BlockSink &sink,
				    sim::Progress *progress)
{
	if (lba_size == 0 || lba_size > BlockFs::kBlockSize || BlockFs::kBlockSize % lba_size)
		return bad("--lba-size: the mixed host needs 512 or 4096");
	const uint32_t per = BlockFs::kBlockSize / lba_size;
	auto l = layout(cfg_, trace_, logical_lbas * lba_size);
	if (!l)
		return std::move(l).error();
	const Layout lay = *l;
	return run_passes(
		placement, sink, progress,
		[&](sim::BlockSink &s, LifetimeRecorder *rec, const std::vector<uint8_t> *oracle,
		    sim::Progress *p) -> Result<void> {
			OffsetSink above(s, lay.a_blocks() * per);
			auto fs = BlockFs::make((lay.total - lay.a_blocks()) * per, lba_size, above,
						nullptr);
			if (!fs)
				return std::move(fs).error();
			HostDisk disk(*fs, s, per, lay.a_blocks(), placement, rec, oracle);
			stats_ = MixedHostStats{};
			MixedRun run(cfg_, lay, trace_, disk, stats_);
			run.run(p);
			return ok();
		});
}

nlohmann::json MixedHostWorkload::extra() const
{
	const MixedHostStats &s = stats_;
	auto ratio = [](uint64_t a, uint64_t b) {
		return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
	};
	nlohmann::json b = {{"writer", cfg_.engine_a ? 2 : 1},
			    {"requests", s.b.requests},
			    {"hit_ratio", ratio(s.b.hits, s.b.lookups)},
			    {"pages_written", s.b.pages_written},
			    {"pages_unlinked", s.b.pages_unlinked},
			    {"eviction_batches", s.b.eviction_batches},
			    {"cap_bytes", s.b_cap_bytes}};
	nlohmann::json j = {{"engine_b", b},
			    {"sim_seconds", s.sim_seconds},
			    {"measured_from_s", s.measured_from_s}};
	// Pages evicted: B's unlinked, A's overwritten.
	j["evictions"] = s.b.pages_unlinked + s.a_overwrites;
	if (!cfg_.engine_a) {
		j["hit_ratio"] = ratio(s.b.hits, s.b.lookups);
		return j;
	}
	j["engine_a"] = {{"writer", 1},
			 {"speed", cfg_.a_speed},
			 {"requests", s.a_requests},
			 {"hit_ratio", ratio(s.a_hits, s.a_lookups)},
			 {"slots", s.a_slots},
			 {"slot_bytes", s.a_slot_blocks * BlockFs::kBlockSize},
			 {"pages_written", s.a_pages_written},
			 {"overwrites", s.a_overwrites}};
	j["hit_ratio"] = ratio(s.a_hits + s.b.hits, s.a_lookups + s.b.lookups);
	nlohmann::json bytes = nlohmann::json::object();
	const char *names[6] = {"a", "b", "prompt_cache", "prompt_index", "logs", "weights"};
	for (int w = 0; w < 6; w++)
		bytes[names[w]] = s.bytes[w];
	j["bytes"] = bytes;
	j["reserve_bytes"] = s.reserve_bytes;
	j["dropped_files"] = s.dropped;
	return j;
}

void add_mixed_host_options(CLI::App &cmd, WorkloadOptions &o)
{
	cmd.add_option(
		   "--hicache-page-tokens", o.hicache_page_tokens,
		   "--workload hicache / mixed: tokens per HiCache page file (sglang --page-size)")
		->capture_default_str();
	cmd.add_option("--hicache-evict-ratio", o.hicache_evict_ratio,
		       "--workload hicache / mixed: a full HiCache cap unlinks LRU pages down to "
		       "this share of it")
		->capture_default_str();
	cmd.add_option(
		   "--mixed-a-speed", o.mixed_a_speed,
		   "--workload mixed: replay speed of engine A (the KVBM slot file); B runs at 1")
		->capture_default_str();
	cmd.add_option("--mixed-a-share", o.mixed_a_share,
		       "--workload mixed: engine A's share of the KV room (B's cap is the rest)")
		->capture_default_str();
	cmd.add_option("--mixed-a-page-tokens", o.mixed_a_page_tokens,
		       "--workload mixed: tokens per slot of engine A (the KVBM block)")
		->capture_default_str();
	cmd.add_option("--mixed-a-min-hits", o.mixed_a_min_hits,
		       "--workload mixed: sightings of a block before engine A offloads it to disk")
		->capture_default_str();
	cmd.add_option("--mixed-prompt-every", o.mixed_prompt_every,
		       "--workload mixed: one request in N saves its prompt KV to the prompt cache "
		       "(0: no prompt cache)")
		->capture_default_str();
	cmd.add_option("--mixed-prompt-ttl-s", o.mixed_prompt_ttl_s,
		       "--workload mixed: seconds a prompt-cache file lives")
		->capture_default_str();
}

Result<std::unique_ptr<sim::Workload>> make_mixed_host(const WorkloadOptions &o,
						       const WorkloadContext &ctx)
{
	if (o.kv_trace.empty())
		return bad("--workload " + ctx.workload +
			   " replays a Mooncake trace in each engine: pass --kv-trace FILE");
	if (!o.blk_trace.empty())
		return bad("--workload " + ctx.workload + " takes --kv-trace, not --blk-trace");
	MixedHostConfig c;
	c.engine_a = ctx.workload == "mixed";
	c.utilisation = ctx.utilisation;
	auto chunk = chunk_bytes_for(o.kv_model, o.kv_scale);
	if (!chunk)
		return std::move(chunk).error();
	const auto preset = find_preset(o.kv_model);
	c.bytes_per_token = preset->bytes_per_token;
	c.scale = static_cast<double>(*chunk) /
		  static_cast<double>(preset->bytes_per_token * kMooncakeBlockTokens);
	c.page_tokens_b = o.hicache_page_tokens;
	c.eviction_ratio = o.hicache_evict_ratio;
	c.page_tokens_a = o.mixed_a_page_tokens;
	c.min_hits_a = o.mixed_a_min_hits;
	c.a_speed = o.mixed_a_speed;
	c.a_share = o.mixed_a_share;
	c.prompt_every = o.mixed_prompt_every;
	c.prompt_ttl_s = o.mixed_prompt_ttl_s;
	KVFDP_TRY(host_sizes(o, c.log_rate, c.log_file_bytes, c.weights_bytes));
	c.log_keep = o.host_log_keep;
	c.swap_s = o.host_swap_s;
	auto trace = load_mooncake(o.kv_trace, o.kv_requests);
	if (!trace)
		return std::move(trace).error();
	KVFDP_TRY(MixedHostWorkload::validate(c, *trace, ctx.capacity_bytes));
	return std::unique_ptr<sim::Workload>(
		std::make_unique<MixedHostWorkload>(std::move(*trace), c));
}

}  // namespace kvfdp::workload
