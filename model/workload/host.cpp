// The shared-host workload: engines, staging, logs and weights on one BlockFs, in time order.
#include "model/workload/host.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <queue>

#include "bpf/tag.h"
#include "model/workload/block_fs.hpp"

namespace kvfdp::workload {

namespace {

Error bad(const std::string &what)
{
	return guidance_error(std::errc::invalid_argument, what);
}

// The engines' requests in time order: engine e replays the trace at speed[e], pass after
// pass, each pass with hash ids shifted past the previous pass's.
class Schedule {
public:
	Schedule(const std::vector<MooncakeRequest> &trace, const std::vector<double> &speeds)
	    : trace_(trace), speeds_(speeds), next_(speeds.size(), 0)
	{
		const double first = static_cast<double>(trace.front().timestamp_ms) / 1000.0;
		const double last = static_cast<double>(trace.back().timestamp_ms) / 1000.0;
		const double gap = trace.size() > 1
					   ? (last - first) / static_cast<double>(trace.size() - 1)
					   : 1.0;
		first_ = first;
		period_ = last - first + std::max(gap, 1e-3);
		double slowest = std::numeric_limits<double>::infinity();
		for (double s : speeds)
			slowest = std::min(slowest, s);
		end_ = period_ / slowest;
		for (const auto &r : trace)
			for (uint64_t h : r.hash_ids)
				id_span_ = std::max(id_span_, h + 1);
	}

	// Seconds from the start of the run to the end (one pass at the slowest speed).
	[[nodiscard]] double end() const { return end_; }

	// The next request of any engine before end(): false when there is none.
	bool next(uint32_t &engine, double &t, uint64_t &pass, size_t &index)
	{
		double best = std::numeric_limits<double>::infinity();
		uint32_t be = 0;
		for (uint32_t e = 0; e < speeds_.size(); e++) {
			const double te = time_of(e, next_[e]);
			if (te < best) {
				best = te;
				be = e;
			}
		}
		if (!(best < end_))
			return false;
		engine = be;
		t = best;
		pass = next_[be] / trace_.size();
		index = next_[be] % trace_.size();
		next_[be]++;
		return true;
	}

	// Request index of a pass with its hash ids moved to that pass's range.
	void request(uint64_t pass, size_t index, MooncakeRequest &out) const
	{
		out = trace_[index];
		for (uint64_t &h : out.hash_ids)
			h += pass * id_span_;
	}

private:
	[[nodiscard]] double time_of(uint32_t e, uint64_t n) const
	{
		const uint64_t pass = n / trace_.size();
		const double ts =
			static_cast<double>(trace_[n % trace_.size()].timestamp_ms) / 1000.0 -
			first_;
		return (static_cast<double>(pass) * period_ + ts) / speeds_[e];
	}

	const std::vector<MooncakeRequest> &trace_;
	std::vector<double> speeds_;
	std::vector<uint64_t> next_;
	double first_ = 0, period_ = 1, end_ = 0;
	uint64_t id_span_ = 1;
};

// Writer restarts (HostConfig::restart_every): writer i of W restarts each time the device
// has written one more period since i / W of a period; its k-th restart gives it id
// i + 1 + k x W (fresh, never an id another writer had), or keeps i + 1 (a stable identity).
class Restarts {
public:
	Restarts(uint64_t period_bytes, uint32_t writers, bool keep_id)
	    : period_(keep_id ? 0 : period_bytes), writers_(writers), count_(writers, 0)
	{
	}

	// Writer i's id after `clock` bytes written.
	uint64_t id(uint32_t i, uint64_t clock)
	{
		if (period_ == 0)
			return i + 1;
		const uint64_t offset = period_ * i / writers_;
		const uint64_t k = clock >= offset + period_ ? (clock - offset) / period_ : 0;
		count_[i] = std::max(count_[i], k);
		return i + 1 + k * writers_;
	}

	[[nodiscard]] uint64_t restarts() const
	{
		uint64_t n = 0;
		for (uint64_t k : count_)
			n += k;
		return n;
	}

private:
	uint64_t period_;
	uint32_t writers_;
	std::vector<uint64_t> count_;  // restarts so far, per writer
};

struct Sizes {
	uint64_t log_append = 0;  // blocks per log append (one 4 KiB block)
	double append_every = 0;  // seconds between appends (0: no logs)
	uint64_t log_file = 0;    // blocks per log file
	uint64_t weights = 0;     // blocks of the weights file (0: none)
};

uint64_t scaled_blocks(uint64_t unscaled, double scale)
{
	if (unscaled == 0)
		return 0;
	return BlockFs::blocks_for(
		static_cast<uint64_t>(std::llround(static_cast<double>(unscaled) * scale)));
}

uint64_t staging_blocks(const MooncakeRequest &r, uint64_t chunk_bytes)
{
	return BlockFs::blocks_for(r.input_length * chunk_bytes / kMooncakeBlockTokens);
}

class HostRun {
public:
	HostRun(const HostConfig &cfg, const std::vector<MooncakeRequest> &trace, BlockFs &fs,
		HostStats &st, sim::Placement placement, const std::vector<uint8_t> *oracle)
	    : cfg_(cfg), trace_(trace), fs_(fs), st_(st), placement_(placement), oracle_(oracle),
	      speeds_(cfg.speeds), shares_(cfg.shares)
	{
		speeds_.resize(cfg.engines, 1.0);
		if (shares_.empty())
			shares_.assign(cfg.engines, 1.0 / cfg.engines);
		sizes_.log_append = 1;
		const double rate = static_cast<double>(cfg.log_rate) * cfg.scale;
		sizes_.append_every = rate > 0 ? BlockFs::kBlockSize / rate : 0;
		sizes_.log_file =
			std::max<uint64_t>(1, scaled_blocks(cfg.log_file_bytes, cfg.scale));
		sizes_.weights = scaled_blocks(cfg.weights_bytes, cfg.scale);
	}

	Result<void> run(sim::Progress *progress)
	{
		const uint32_t n = cfg_.engines;
		writer_staging_ = n + 1;
		writer_logs_ = n + 2;
		writer_weights_ = n + 3;
		KVFDP_TRY(open_engines());

		const uint32_t writers = n + 3;
		Restarts restarts(static_cast<uint64_t>(cfg_.restart_every *
							static_cast<double>(fs_.total_blocks()) *
							BlockFs::kBlockSize),
				  writers, cfg_.restart_keeps_id);
		Schedule sched(trace_, speeds_);
		const double end = sched.end();
		double next_append =
			sizes_.append_every > 0 ? 0.0 : std::numeric_limits<double>::infinity();
		double next_swap = sizes_.weights ? 0.0 : std::numeric_limits<double>::infinity();
		uint32_t engine = 0;
		double t = 0;
		uint64_t pass = 0;
		size_t index = 0;
		bool have = sched.next(engine, t, pass, index);
		MooncakeRequest req;
		uint64_t count = 0;
		while (have || next_append < end || next_swap < end) {
			const double t_req = have ? t : std::numeric_limits<double>::infinity();
			const double now = std::min({t_req, next_append, next_swap});
			if (now >= end)
				break;
			expire_staging(now);
			set_writers(restarts);
			if (now == next_swap) {
				swap_weights();
				next_swap += cfg_.swap_s;
			} else if (now == next_append) {
				append_log();
				next_append += sizes_.append_every;
			} else {
				sched.request(pass, index, req);
				if (cfg_.staging_s > 0)
					stage(req, now);
				engines_[engine]->request(req, placement_, oracle_);
				st_.requests++;
				if (!measuring_)
					measure_when_full(now);
				have = sched.next(engine, t, pass, index);
			}
			st_.sim_seconds = now;
			if (progress && (++count % 1024) == 0)
				progress->update(now / end);
		}
		if (!measuring_)
			fs_.begin_measurement();  // never full: everything counts
		for (const auto &e : engines_)
			st_.engines.push_back(e->stats());
		st_.restarts = cfg_.restart_keeps_id ? 0 : restarts.restarts();
		st_.writer_ids = writers + st_.restarts;
		if (progress)
			progress->update(1.0);
		return ok();
	}

private:
	// Gives each engine its KV store, its share of the device at the utilisation once the
	// other writers' reserve is kept out; a usage error when that leaves a store no chunk.
	Result<void> open_engines()
	{
		const uint32_t n = cfg_.engines;
		// What the other writers can hold at once, kept out of the stores' capacity.
		uint64_t reserve =
			2 * sizes_.weights +
			(sizes_.append_every > 0 ? (cfg_.log_keep + 1) * sizes_.log_file + 1 : 0);
		reserve += staging_peak();
		const auto total = static_cast<uint64_t>(
			static_cast<long double>(fs_.total_blocks()) * cfg_.store.utilisation);
		const uint64_t need = BlockFs::blocks_for(cfg_.store.chunk_bytes);
		if (total <= reserve + need * n)
			return bad(
				"--workload host: staging, logs and weights need " +
				std::to_string(reserve * BlockFs::kBlockSize >> 20) +
				" MiB at once, which leaves the KV stores no room; raise --capacity or --util, or "
				"lower --host-weights / --host-log-* / --host-staging-s");
		st_.reserve_bytes = reserve * BlockFs::kBlockSize;
		const uint64_t kv = total - reserve;
		for (uint32_t e = 0; e < n; e++) {
			const auto cap =
				static_cast<uint64_t>(static_cast<double>(kv) * shares_[e]);
			if (cap < need)
				return bad("--host-shares: engine " + std::to_string(e + 1) +
					   "'s store holds no chunk; raise its share");
			engines_.push_back(
				std::make_unique<ChunkEngine>(cfg_.store, fs_, cap, 1 + e));
		}
		return ok();
	}

	// Starts the measurement at time now once every engine's store is full (has evicted).
	void measure_when_full(double now)
	{
		bool full = true;
		for (const auto &e : engines_)
			full = full && e->stats().evictions > 0;
		if (full) {
			fs_.begin_measurement();
			measuring_ = true;
			st_.measured_from_s = now;
		}
	}

	uint8_t classify(uint8_t hint) const
	{
		switch (placement_) {
		case sim::Placement::none: return KVFDP_CLASS_NOT_SET;
		case sim::Placement::oracle: {
			const uint64_t v = fs_.next_version();
			return oracle_ && v < oracle_->size() ? (*oracle_)[v]
							      : uint8_t{KVFDP_CLASS_EXTREME};
		}
		default: return hint;
		}
	}

	// Each writer's id at the clock now (restarts).
	void set_writers(Restarts &r)
	{
		const uint64_t clock = fs_.clock();
		const auto n = static_cast<uint32_t>(engines_.size());
		for (uint32_t e = 0; e < n; e++)
			engines_[e]->set_writer(r.id(e, clock));
		writer_staging_ = r.id(n, clock);
		writer_logs_ = r.id(n + 1, clock);
		writer_weights_ = r.id(n + 2, clock);
	}

	// A file of the other writers; false (counted, nothing written) if the device is full.
	bool create(uint64_t blocks, uint8_t hint, uint64_t writer, FileExtents &f)
	{
		return fs_.create(blocks * BlockFs::kBlockSize, classify(hint), f, writer);
	}

	// The most staging blocks alive at once over the run (a dry pass over the schedule).
	uint64_t staging_peak() const
	{
		if (cfg_.staging_s <= 0)
			return 0;
		Schedule sched(trace_, speeds_);
		std::deque<std::pair<double, uint64_t>> alive;
		uint64_t sum = 0, peak = 0;
		uint32_t e = 0;
		double t = 0;
		uint64_t pass = 0;
		size_t i = 0;
		while (sched.next(e, t, pass, i)) {
			while (!alive.empty() && alive.front().first <= t) {
				sum -= alive.front().second;
				alive.pop_front();
			}
			const uint64_t b = staging_blocks(trace_[i], cfg_.store.chunk_bytes);
			alive.emplace_back(t + cfg_.staging_s, b);
			sum += b;
			peak = std::max(peak, sum);
		}
		return peak;
	}

	void stage(const MooncakeRequest &req, double now)
	{
		staging_.push_back({now + cfg_.staging_s, FileExtents{}});
		if (create(staging_blocks(req, cfg_.store.chunk_bytes), KVFDP_CLASS_SHORT,
			   writer_staging_, staging_.back().second)) {
			st_.staging_files++;
			st_.staging_bytes += staging_.back().second.blocks * BlockFs::kBlockSize;
		}
	}

	void expire_staging(double now)
	{
		while (!staging_.empty() && staging_.front().first <= now) {
			if (staging_.front().second.blocks)
				fs_.unlink(staging_.front().second);
			staging_.pop_front();
		}
	}

	void append_log()
	{
		FileExtents seg;
		if (!create(sizes_.log_append, KVFDP_CLASS_NOT_SET, writer_logs_, seg))
			return;
		st_.log_bytes += seg.blocks * BlockFs::kBlockSize;
		log_blocks_ += seg.blocks;
		current_log_.push_back(std::move(seg));
		if (log_blocks_ < sizes_.log_file)
			return;
		rotated_.push_back(std::move(current_log_));
		current_log_.clear();
		log_blocks_ = 0;
		st_.log_files++;
		while (rotated_.size() > cfg_.log_keep) {
			for (auto &f : rotated_.front())
				fs_.unlink(f);
			rotated_.pop_front();
		}
	}

	void swap_weights()
	{
		FileExtents next;
		if (!create(sizes_.weights, KVFDP_CLASS_EXTREME, writer_weights_, next))
			return;
		st_.weight_bytes += next.blocks * BlockFs::kBlockSize;
		st_.swaps++;
		if (weights_.blocks)
			fs_.unlink(weights_);
		weights_ = std::move(next);
	}

	const HostConfig &cfg_;
	const std::vector<MooncakeRequest> &trace_;
	BlockFs &fs_;
	HostStats &st_;
	sim::Placement placement_;
	const std::vector<uint8_t> *oracle_;
	std::vector<double> speeds_, shares_;
	Sizes sizes_;
	uint64_t writer_staging_ = 0, writer_logs_ = 0, writer_weights_ = 0;
	std::vector<std::unique_ptr<ChunkEngine>> engines_;
	std::deque<std::pair<double, FileExtents>> staging_;
	std::vector<FileExtents> current_log_;
	std::deque<std::vector<FileExtents>> rotated_;
	uint64_t log_blocks_ = 0;
	FileExtents weights_;
	bool measuring_ = false;
};

}  // namespace

HostWorkload::HostWorkload(std::vector<MooncakeRequest> trace, HostConfig cfg)
    : trace_(std::move(trace)), cfg_(std::move(cfg))
{
}

Result<void> HostWorkload::validate(const HostConfig &c)
{
	if (c.engines < 1 || c.engines > 64)
		return bad("--host-engines: want 1 to 64 engines");
	if (!c.speeds.empty() && c.speeds.size() != c.engines)
		return bad("--host-speeds: give one speed per engine (" +
			   std::to_string(c.engines) + ")");
	for (double s : c.speeds)
		if (!(s > 0 && s <= 1000))
			return bad("--host-speeds: each speed must be in (0, 1000]");
	if (!c.shares.empty() && c.shares.size() != c.engines)
		return bad("--host-shares: give one share per engine (" +
			   std::to_string(c.engines) + ")");
	double sum = 0;
	for (double s : c.shares) {
		if (!(s > 0))
			return bad("--host-shares: each share must be > 0");
		sum += s;
	}
	if (!c.shares.empty() && std::fabs(sum - 1.0) > 1e-6)
		return bad("--host-shares: the shares must add up to 1");
	if (!(c.staging_s >= 0 && c.staging_s <= 86400))
		return bad("--host-staging-s: want 0 (off) to 86400 seconds");
	if (!(c.swap_s > 0))
		return bad("--host-swap-s: want a positive number of seconds");
	if (c.log_rate && c.log_file_bytes == 0)
		return bad("--host-log-file: want a positive size");
	if (!(c.restart_every >= 0 && c.restart_every <= 1000))
		return bad("--host-restart-every: want a fraction of the capacity in (0, 1000]");
	return ok();
}

Result<void> HostWorkload::run(sim::Placement placement, uint64_t logical_lbas, uint32_t lba_size,
			       sim::BlockSink &sink, sim::Progress *progress)
{
	KVFDP_TRY(validate(cfg_));
	if (trace_.empty())
		return bad("--workload host: the trace has no requests");
	return run_passes(placement, sink, progress,
			  [&](sim::BlockSink &s, LifetimeRecorder *rec,
			      const std::vector<uint8_t> *oracle,
			      sim::Progress *p) -> Result<void> {
				  auto fs = BlockFs::make(logical_lbas, lba_size, s, rec);
				  if (!fs)
					  return std::move(fs).error();
				  stats_ = HostStats{};
				  HostRun r(cfg_, trace_, *fs, stats_, placement, oracle);
				  return r.run(p);
			  });
}

nlohmann::json HostWorkload::extra() const
{
	const HostStats &s = stats_;
	nlohmann::json engines = nlohmann::json::array();
	uint64_t lookups = 0, hits = 0, evictions = 0, chunk_bytes = 0;
	for (size_t e = 0; e < s.engines.size(); e++) {
		const ChunkStoreStats &c = s.engines[e];
		lookups += c.lookups;
		hits += c.hits;
		evictions += c.evictions;
		chunk_bytes += c.chunks_written * cfg_.store.chunk_bytes;
		engines.push_back({{"writer", e + 1},
				   {"speed", e < cfg_.speeds.size() ? cfg_.speeds[e] : 1.0},
				   {"requests", c.requests},
				   {"hit_ratio", c.lookups ? static_cast<double>(c.hits) /
								     static_cast<double>(c.lookups)
							   : 0.0},
				   {"chunks_written", c.chunks_written},
				   {"evictions", c.evictions}});
	}
	const uint32_t n = cfg_.engines;
	return {{"hit_ratio",
		 lookups ? static_cast<double>(hits) / static_cast<double>(lookups) : 0.0},
		{"evictions", evictions},
		{"engines", engines},
		{"chunk_bytes_written", chunk_bytes},
		{"staging",
		 {{"writer", n + 1}, {"bytes", s.staging_bytes}, {"files", s.staging_files}}},
		{"logs", {{"writer", n + 2}, {"bytes", s.log_bytes}, {"rotations", s.log_files}}},
		{"weights", {{"writer", n + 3}, {"bytes", s.weight_bytes}, {"swaps", s.swaps}}},
		{"reserve_bytes", s.reserve_bytes},
		{"requests", s.requests},
		{"restarts", s.restarts},
		{"writer_ids", s.writer_ids},
		{"sim_seconds", s.sim_seconds},
		{"measured_from_s", s.measured_from_s}};
}

}  // namespace kvfdp::workload
