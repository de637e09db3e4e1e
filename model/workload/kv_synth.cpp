// The synthetic KV generator: prefill of the long-lived prefixes, then Poisson sessions.
#include "model/workload/kv_synth.hpp"

#include <functional>
#include <queue>
#include <random>
#include <vector>

#include "bpf/tag.h"
#include "model/workload/block_fs.hpp"
#include "model/workload/null_sink.hpp"

namespace kvfdp::workload {

namespace {

struct Session {
	std::vector<FileExtents> files;
};

// What an engine knows when it writes each population's KV.
constexpr uint8_t kHintClass[kPopulations] = {KVFDP_CLASS_LONG, KVFDP_CLASS_MEDIUM,
					      KVFDP_CLASS_SHORT};

class Generator {
public:
	Generator(const KvSynthConfig &cfg, BlockFs &fs, uint64_t cap_blocks, KvSynthStats &st,
		  sim::Placement placement, const std::vector<uint8_t> *oracle)
	    : cfg_(cfg), fs_(fs), cap_blocks_(cap_blocks), st_(st), placement_(placement),
	      oracle_(oracle), rng_(cfg.seed)
	{
	}

	void run(uint64_t target_bytes, uint64_t logical_bytes, sim::Progress *progress)
	{
		logical_bytes_ = logical_bytes;
		double sum_mix = 0, occupancy_s = 0;
		std::array<double, kPopulations> f{};
		for (int p = 0; p < kPopulations; ++p)
			sum_mix += cfg_.mix[p];
		for (int p = 0; p < kPopulations; ++p) {
			f[p] = cfg_.mix[p] / sum_mix;
			occupancy_s += f[p] * cfg_.mean_life_s[p];
		}
		const double cap_bytes = static_cast<double>(cap_blocks_) * BlockFs::kBlockSize;
		// Steady state: live bytes = write rate × Σ share × mean life = the capacity.
		const double write_rate = cap_bytes / occupancy_s;
		std::array<double, kPopulations> rate{};
		double total_rate = 0;
		for (int p = 0; p < kPopulations; ++p) {
			double session_bytes =
				(cfg_.max_chunks[p] + 1) / 2.0 *
				static_cast<double>(BlockFs::blocks_for(cfg_.chunk_bytes)) *
				BlockFs::kBlockSize;
			rate[p] = f[p] * write_rate / session_bytes;
			total_rate += rate[p];
		}
		// Prefill the prefixes to their steady-state share: their lifetimes are far longer
		// than a run, so without it they would never reach it. Exponential lifetimes are
		// memoryless, so the residual lifetime has the same law.
		const double prefix_share = f[kPrefix] * cfg_.mean_life_s[kPrefix] / occupancy_s;
		while (f[kPrefix] > 0 &&
		       static_cast<double>(fs_.used_blocks()) * BlockFs::kBlockSize <
			       prefix_share * cap_bytes * 0.98)
			start_session(kPrefix, 0.0);
		std::exponential_distribution<double> gap(total_rate);
		std::uniform_real_distribution<double> pick(0.0, total_rate);
		double now = 0;
		uint64_t n = 0;
		bool measuring = false;
		while (fs_.clock() < target_bytes) {
			// Warm-up: until one logical capacity has been written.
			if (!measuring && fs_.clock() >= logical_bytes_) {
				fs_.begin_measurement();
				measuring = true;
			}
			now += gap(rng_);
			expire(now);
			double x = pick(rng_);
			int p = 0;
			while (p < kPopulations - 1 && x >= rate[p]) {
				x -= rate[p];
				++p;
			}
			start_session(static_cast<KvPopulation>(p), now);
			if (progress && (++n % 64 == 0))
				progress->update(static_cast<double>(fs_.clock()) /
						 static_cast<double>(target_bytes));
		}
		if (progress)
			progress->update(1.0);
		st_.sim_seconds = now;
	}

private:
	using Death = std::pair<double, uint64_t>;  // (time, session id)

	void end_session(uint64_t id)
	{
		for (auto &file : sessions_[id].files)
			fs_.unlink(file);
		sessions_[id].files.clear();
		sessions_[id].files.shrink_to_fit();
	}

	void expire(double now)
	{
		while (!deaths_.empty() && deaths_.top().first <= now) {
			end_session(deaths_.top().second);
			deaths_.pop();
			++st_.expired;
		}
	}

	uint8_t classify(KvPopulation p) const
	{
		switch (placement_) {
		case sim::Placement::none: return KVFDP_CLASS_NOT_SET;
		case sim::Placement::hint:
		case sim::Placement::writer:  // simulate runs the workload with hint for these
		case sim::Placement::learned: return kHintClass[p];
		case sim::Placement::oracle: break;
		}
		uint64_t v = fs_.next_version();
		return oracle_ && v < oracle_->size() ? (*oracle_)[v]
						      : uint8_t{KVFDP_CLASS_EXTREME};
	}

	void start_session(KvPopulation p, double now)
	{
		std::uniform_int_distribution<uint32_t> chunks(1, cfg_.max_chunks[p]);
		std::exponential_distribution<double> life(1.0 / cfg_.mean_life_s[p]);
		const uint32_t n = chunks(rng_);
		const double death = now + life(rng_);
		const uint64_t need = BlockFs::blocks_for(cfg_.chunk_bytes);
		const uint64_t id = sessions_.size();
		sessions_.emplace_back();
		for (uint32_t c = 0; c < n; ++c) {
			// Full store: the session due to die soonest goes first (never this one).
			while ((fs_.used_blocks() + need > cap_blocks_ ||
				fs_.free_blocks() < need) &&
			       !deaths_.empty()) {
				end_session(deaths_.top().second);
				deaths_.pop();
				++st_.evictions;
			}
			FileExtents file;
			if (!fs_.create(cfg_.chunk_bytes, classify(p), file))
				break;
			sessions_[id].files.push_back(std::move(file));
			++st_.chunks_written;
			st_.bytes[p] += need * BlockFs::kBlockSize;
		}
		++st_.sessions[p];
		deaths_.push({death, id});
	}

	const KvSynthConfig &cfg_;
	BlockFs &fs_;
	uint64_t cap_blocks_;
	KvSynthStats &st_;
	sim::Placement placement_;
	const std::vector<uint8_t> *oracle_;
	uint64_t logical_bytes_ = 0;
	std::mt19937_64 rng_;
	std::vector<Session> sessions_;
	std::priority_queue<Death, std::vector<Death>, std::greater<Death>> deaths_;
};

Result<void> generate(const KvSynthConfig &cfg, sim::Placement placement,
		      const std::vector<uint8_t> *oracle, uint64_t logical_lbas, uint32_t lba_size,
		      sim::BlockSink &sink, LifetimeRecorder *recorder, sim::Progress *progress,
		      KvSynthStats &st)
{
	auto fs = BlockFs::make(logical_lbas, lba_size, sink, recorder);
	if (!fs)
		return std::move(fs).error();
	st = KvSynthStats{};
	uint64_t max_session = 0;
	for (auto m : cfg.max_chunks)
		max_session = std::max<uint64_t>(max_session, m);
	auto cap_blocks = store_blocks(
		*fs, cfg, BlockFs::blocks_for(cfg.chunk_bytes) * max_session * BlockFs::kBlockSize,
		"the largest KV session", st);
	if (!cap_blocks)
		return std::move(cap_blocks).error();
	Generator gen(cfg, *fs, *cap_blocks, st, placement, oracle);
	const uint64_t logical_bytes = fs->total_blocks() * BlockFs::kBlockSize;
	gen.run(static_cast<uint64_t>(cfg.drive_writes * static_cast<double>(logical_bytes)),
		logical_bytes, progress);
	finish_stats(*fs, st);
	return ok();
}

}  // namespace

KvSynthWorkload::KvSynthWorkload(KvSynthConfig cfg) : cfg_(cfg) {}

Result<void> KvSynthWorkload::run(sim::Placement placement, uint64_t logical_lbas,
				  uint32_t lba_size, sim::BlockSink &sink, sim::Progress *progress)
{
	double sum = 0;
	for (int p = 0; p < kPopulations; ++p) {
		if (cfg_.mix[p] < 0 || !(cfg_.mean_life_s[p] > 0) || cfg_.max_chunks[p] == 0)
			return guidance_error(
				std::errc::invalid_argument,
				"--kv-mix shares must be >= 0, lifetimes > 0 and chunk "
				"counts >= 1");
		sum += cfg_.mix[p];
	}
	if (!(sum > 0))
		return guidance_error(std::errc::invalid_argument,
				      "--kv-mix: at least one share must be > 0");
	return run_passes(placement, sink, progress,
			  [&](sim::BlockSink &s, LifetimeRecorder *rec,
			      const std::vector<uint8_t> *oracle, sim::Progress *p) {
				  return generate(cfg_, placement, oracle, logical_lbas, lba_size,
						  s, rec, p, stats_);
			  });
}

nlohmann::json KvSynthWorkload::extra() const
{
	const auto &s = stats_;
	static const char *kNames[kPopulations] = {"prefix", "conversation", "single_query"};
	nlohmann::json j;
	add_chunk_file_json(j, s);
	j["expired"] = s.expired;
	j["sim_seconds"] = s.sim_seconds;
	nlohmann::json pops = nlohmann::json::object();
	for (int p = 0; p < kPopulations; ++p)
		pops[kNames[p]] = {{"sessions", s.sessions[p]}, {"bytes", s.bytes[p]}};
	j["populations"] = pops;
	return j;
}

}  // namespace kvfdp::workload
