// The KVBM and TensorRT-LLM disk tiers: Zipf block requests over a host LRU and a slot file.
#include "model/workload/disk_tier.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <random>
#include <vector>

#include "bpf/tag.h"
#include "model/workload/chunk_files.hpp"
#include "model/workload/lifetime.hpp"

namespace kvfdp::workload {

namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint64_t kTailChunkBlocks = 256;  // the rest of the namespace, 1 MiB at a time
constexpr uint32_t kMaxCount = 1u << 20;    // the filter's doubling count saturates here
// Accesses without a disk write, per disk slot, after which a run gives up.
constexpr uint64_t kStallSlots = 64;

// Zipf(s) ranks 1..n by rejection-inversion (Hörmann and Derflinger 1996): O(1) a sample.
class Zipf {
public:
	Zipf(uint64_t n, double s) : n_(static_cast<double>(n)), s_(s)
	{
		hx1_ = hint(1.5) - 1;
		hn_ = hint(n_ + 0.5);
		cut_ = 2 - hinv(hint(2.5) - h(2));
	}

	template <class Rng> uint64_t operator()(Rng &rng)
	{
		std::uniform_real_distribution<double> unit(0.0, 1.0);
		for (;;) {
			const double u = hn_ + unit(rng) * (hx1_ - hn_);
			const double x = hinv(u);
			double k = std::floor(x + 0.5);
			k = std::clamp(k, 1.0, n_);
			if (k - x <= cut_ || u >= hint(k + 0.5) - h(k))
				return static_cast<uint64_t>(k);
		}
	}

private:
	static double log1p_over(double x)
	{
		return std::abs(x) > 1e-8 ? std::log1p(x) / x
					  : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
	}
	static double expm1_over(double x)
	{
		return std::abs(x) > 1e-8 ? std::expm1(x) / x
					  : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
	}
	// The integral of x^-s, shifted so that hint(1) is 0, and its inverse.
	double hint(double x) const
	{
		const double l = std::log(x);
		return expm1_over((1 - s_) * l) * l;
	}
	double hinv(double x) const
	{
		const double t = std::max(x * (1 - s_), -1.0);
		return std::exp(log1p_over(t) * x);
	}
	double h(double x) const { return std::exp(-s_ * std::log(x)); }

	double n_, s_, hx1_ = 0, hn_ = 0, cut_ = 0;
};

// An LRU order over ids 0..n-1 (head: least recently used); an id is in it or not.
class Lru {
public:
	explicit Lru(uint32_t n) : prev_(n, kNone), next_(n, kNone), in_(n, 0) {}

	[[nodiscard]] bool contains(uint32_t x) const { return in_[x] != 0; }
	[[nodiscard]] uint32_t size() const { return size_; }
	[[nodiscard]] uint32_t head() const { return head_; }

	void push(uint32_t x)
	{
		prev_[x] = tail_;
		next_[x] = kNone;
		if (tail_ != kNone)
			next_[tail_] = x;
		else
			head_ = x;
		tail_ = x;
		in_[x] = 1;
		size_++;
	}

	void remove(uint32_t x)
	{
		if (prev_[x] != kNone)
			next_[prev_[x]] = next_[x];
		else
			head_ = next_[x];
		if (next_[x] != kNone)
			prev_[next_[x]] = prev_[x];
		else
			tail_ = prev_[x];
		prev_[x] = next_[x] = kNone;
		in_[x] = 0;
		size_--;
	}

	void touch(uint32_t x)
	{
		remove(x);
		push(x);
	}

private:
	std::vector<uint32_t> prev_, next_;
	std::vector<uint8_t> in_;
	uint32_t head_ = kNone, tail_ = kNone, size_ = 0;
};

// Slots per rank file: the utilisation's share of the capacity, split over the ranks.
uint64_t slot_blocks(const DiskTierConfig &cfg)
{
	const double per_rank = static_cast<double>(cfg.block_bytes) * cfg.scale /
				static_cast<double>(std::max<uint32_t>(cfg.ranks, 1));
	const auto b = static_cast<uint64_t>(std::llround(per_rank / kBlock));
	return b ? b : 1;
}

uint64_t disk_slots(const DiskTierConfig &cfg, uint64_t total_blocks)
{
	const auto file =
		static_cast<uint64_t>(cfg.utilisation * static_cast<double>(total_blocks) /
				      std::max<uint32_t>(cfg.ranks, 1));
	return file / slot_blocks(cfg);
}

class Tier {
public:
	Tier(const DiskTierConfig &cfg, uint64_t logical_lbas, uint32_t lba_size,
	     sim::BlockSink &sink, sim::Placement placement, LifetimeRecorder *rec,
	     const std::vector<uint8_t> *oracle, DiskTierStats &st)
	    : cfg_(cfg), lbas_per_block_(kBlock / lba_size), total_(logical_lbas / lbas_per_block_),
	      obj_(slot_blocks(cfg)), slots_(static_cast<uint32_t>(disk_slots(cfg, total_))),
	      keys_(static_cast<uint32_t>(cfg.keys * slots_)),
	      host_cap_(std::max<uint32_t>(1, static_cast<uint32_t>(cfg.host * slots_))),
	      sink_(sink), placement_(placement), rec_(rec), oracle_(oracle), st_(st),
	      rng_(cfg.seed), zipf_(keys_, cfg.zipf), host_(keys_), disk_(slots_),
	      key_slot_(keys_, kNone), slot_key_(slots_, kNone), count_(keys_, 0), ever_(keys_, 0),
	      version_(uint64_t{slots_} * cfg.ranks, LifetimeRecorder::kNever)
	{
		st_ = DiskTierStats{};
		st_.slots = slots_;
		st_.slot_bytes = obj_ * kBlock;
		st_.fill_writer = cfg.fill ? cfg.ranks + 1 : 0;
	}

	Result<void> run(uint64_t logical_bytes, sim::Progress *progress)
	{
		if (cfg_.fill)
			fill();
		uint64_t measure_at = 0, end = 0, last_write = 0;
		bool measuring = false;
		for (uint64_t n = 0;; n++) {
			if (!end && used_ == slots_) {
				measure_at = clock_ + static_cast<uint64_t>(
							      cfg_.warmup_writes *
							      static_cast<double>(logical_bytes));
				end = measure_at +
				      static_cast<uint64_t>(cfg_.measure_writes *
							    static_cast<double>(logical_bytes));
			}
			if (end && !measuring && clock_ >= measure_at) {
				sink_.begin_measurement();
				measuring = true;
			}
			if (end && clock_ >= end)
				break;
			const uint64_t writes = st_.disk_writes;
			access(static_cast<uint32_t>(zipf_(rng_) - 1));
			if (st_.disk_writes != writes)
				last_write = n;
			else if (n - last_write > kStallSlots * slots_)
				return guidance_error(
					std::errc::invalid_argument,
					"--engine-keys: the requests stopped reaching the disk tier (all hits above it); raise --engine-keys or lower --engine-zipf");
			if (cfg_.engine == DiskTierConfig::Engine::kvbm && decay_every() &&
			    ++since_decay_ >= decay_every())
				decay();
			if (progress && (n % 4096) == 0 && end)
				progress->update(static_cast<double>(clock_) /
						 static_cast<double>(end));
		}
		if (progress)
			progress->update(1.0);
		return ok();
	}

private:
	uint64_t decay_every() const
	{
		return static_cast<uint64_t>(cfg_.decay * static_cast<double>(slots_));
	}

	// One block request.
	void access(uint32_t k)
	{
		st_.accesses++;
		if (host_.contains(k)) {
			host_.touch(k);
			st_.host_hits++;
			return;
		}
		const bool on_disk = key_slot_[k] != kNone;
		if (on_disk)
			st_.disk_hits++;
		if (cfg_.engine == DiskTierConfig::Engine::kvbm) {
			// A disk hit onboards the block: the disk block is returned with a new tick.
			if (on_disk)
				disk_.touch(key_slot_[k]);
			host_insert(k);
			if (!on_disk)
				offer(k);
			return;
		}
		// TensorRT-LLM: a page read back from disk moves up and frees its slot.
		if (on_disk)
			free_slot(key_slot_[k]);
		host_insert(k);
	}

	// k enters host memory; the least recently used block leaves it (dropped by KVBM,
	// demoted to the disk by TensorRT-LLM).
	void host_insert(uint32_t k)
	{
		if (host_.size() >= host_cap_) {
			const uint32_t out = host_.head();
			host_.remove(out);
			if (cfg_.engine == DiskTierConfig::Engine::trtllm)
				store(out);
		}
		host_.push(k);
	}

	// KVBM's frequency filter on a G2 registration of a block not on disk.
	void offer(uint32_t k)
	{
		uint32_t &c = count_[k];
		if (c == 0) {
			c = 1;
			counted_.push_back(k);
		} else {
			c = std::min(c * 2, kMaxCount);
		}
		if (c >= cfg_.filter)
			store(k);
		else
			st_.filtered++;
	}

	void decay()
	{
		since_decay_ = 0;
		size_t out = 0;
		for (uint32_t k : counted_)
			if (--count_[k] > 0)
				counted_[out++] = k;
		counted_.resize(out);
	}

	// A disk slot for a new block: KVBM takes never-used blocks first, then the least
	// recently returned; TensorRT-LLM takes freed slots first-freed first, then never-used
	// ones, and evicts its least recently used page when neither is left.
	uint32_t acquire()
	{
		if (cfg_.engine == DiskTierConfig::Engine::trtllm && !recycled_.empty()) {
			const uint32_t s = recycled_.front();
			recycled_.pop_front();
			return s;
		}
		if (used_ < slots_)
			return used_++;
		const uint32_t s = disk_.head();
		free_slot(s);
		if (cfg_.engine == DiskTierConfig::Engine::trtllm) {
			const uint32_t r = recycled_.front();
			recycled_.pop_front();
			return r;
		}
		return s;
	}

	// The slot's block leaves the disk (its data stays until the slot is overwritten).
	void free_slot(uint32_t s)
	{
		disk_.remove(s);
		key_slot_[slot_key_[s]] = kNone;
		slot_key_[s] = kNone;
		if (cfg_.engine == DiskTierConfig::Engine::trtllm)
			recycled_.push_back(s);
	}

	// Writes block k to a disk slot, in every rank's file.
	void store(uint32_t k)
	{
		const uint32_t s = acquire();
		slot_key_[s] = k;
		key_slot_[k] = s;
		if (!ever_[k]) {
			ever_[k] = 1;
			st_.distinct_written++;
		}
		disk_.push(s);
		st_.disk_writes++;
		for (uint32_t r = 0; r < cfg_.ranks; r++)
			write_slot(r, s, r + 1);
	}

	uint64_t slot_block(uint32_t rank, uint32_t s) const
	{
		return (uint64_t{rank} * slots_ + s) * obj_;
	}

	void write_slot(uint32_t rank, uint32_t s, uint64_t writer)
	{
		const uint64_t bytes = obj_ * kBlock;
		uint64_t &ver = version_[uint64_t{rank} * slots_ + s];
		if (rec_ && ver != LifetimeRecorder::kNever)
			rec_->death(ver, clock_);
		ver = born(bytes);
		sink_.write(slot_block(rank, s) * lbas_per_block_, obj_ * lbas_per_block_,
			    classify(ver), writer);
		clock_ += bytes;
	}

	// The precondition: every slot of every rank's file, then the rest of the namespace.
	void fill()
	{
		const uint64_t id = cfg_.ranks + 1;
		for (uint32_t r = 0; r < cfg_.ranks; r++)
			for (uint32_t s = 0; s < slots_; s++)
				write_slot(r, s, id);
		const uint64_t start = slot_block(cfg_.ranks, 0);
		for (uint64_t b = start; b < total_; b += kTailChunkBlocks) {
			const uint64_t n = std::min(kTailChunkBlocks, total_ - b);
			const uint64_t v = born(n * kBlock);
			sink_.write(b * lbas_per_block_, n * lbas_per_block_, classify(v), id);
			clock_ += n * kBlock;
		}
		st_.fill_bytes = clock_;
	}

	uint64_t born(uint64_t bytes)
	{
		if (rec_)
			rec_->birth(clock_, bytes);
		return versions_++;
	}

	// No hint: both engines write their files without one (the oracle's by lifetime).
	uint8_t classify(uint64_t version) const
	{
		if (placement_ == sim::Placement::oracle)
			return oracle_ && version < oracle_->size() ? (*oracle_)[version]
								    : uint8_t{KVFDP_CLASS_EXTREME};
		return KVFDP_CLASS_NOT_SET;
	}

	const DiskTierConfig &cfg_;
	uint64_t lbas_per_block_, total_, obj_;
	uint32_t slots_, keys_, host_cap_;
	sim::BlockSink &sink_;
	sim::Placement placement_;
	LifetimeRecorder *rec_;
	const std::vector<uint8_t> *oracle_;
	DiskTierStats &st_;
	std::mt19937_64 rng_;
	Zipf zipf_;
	Lru host_, disk_;
	std::vector<uint32_t> key_slot_, slot_key_, count_, counted_;
	std::vector<uint8_t> ever_;
	std::deque<uint32_t> recycled_;
	std::vector<uint64_t> version_;
	uint32_t used_ = 0;
	uint64_t versions_ = 0, clock_ = 0, since_decay_ = 0;
};

}  // namespace

std::string DiskTierWorkload::name() const
{
	return cfg_.engine == DiskTierConfig::Engine::kvbm ? "kvbm" : "trtllm";
}

Result<void> DiskTierWorkload::validate(const DiskTierConfig &cfg, uint64_t capacity_bytes)
{
	auto bad = [](const std::string &what) {
		return guidance_error(std::errc::invalid_argument, what);
	};
	if (!(cfg.utilisation > 0 && cfg.utilisation <= 1))
		return bad("--util: the slot files' share of the capacity must be in (0, 1]");
	if (cfg.ranks < 1 || cfg.ranks > 64)
		return bad("--trtllm-ranks: give 1 to 64 ranks");
	if (!(cfg.zipf > 0 && cfg.zipf < 10))
		return bad("--engine-zipf: give a skew in (0, 10) (e.g. 0.5)");
	if (!(cfg.host > 0 && cfg.host < 100))
		return bad("--engine-host: give host memory in disk slots, in (0, 100) (e.g. 0.1)");
	if (cfg.filter < 1 || !(cfg.decay > 0))
		return bad("--kvbm-filter / --kvbm-decay: give a threshold >= 1 and a decay > 0");
	const uint64_t slots = disk_slots(cfg, capacity_bytes / kBlock);
	char buf[256];
	if (slots < 16) {
		std::snprintf(
			buf, sizeof buf,
			"--util: the slot files hold %llu slots of %llu bytes; raise --capacity or --util, or lower --kv-scale",
			static_cast<unsigned long long>(slots),
			static_cast<unsigned long long>(slot_blocks(cfg) * kBlock));
		return bad(buf);
	}
	const double keys = cfg.keys * static_cast<double>(slots);
	if (!(cfg.keys > 1 + cfg.host) || keys > 4e9) {
		std::snprintf(
			buf, sizeof buf,
			"--engine-keys: %.4g blocks per disk slot never overflow host and disk (%.4g); give more than %.4g and at most %.4g",
			cfg.keys, 1 + cfg.host, 1 + cfg.host, 4e9 / static_cast<double>(slots));
		return bad(buf);
	}
	return ok();
}

Result<void> DiskTierWorkload::run(sim::Placement placement, uint64_t logical_lbas,
				   uint32_t lba_size, sim::BlockSink &sink, sim::Progress *progress)
{
	if (lba_size > kBlock || kBlock % lba_size)
		return guidance_error(std::errc::invalid_argument,
				      "--workload " + name() +
					      " needs an LBA size of at most 4096");
	const uint64_t logical_bytes = logical_lbas * lba_size;
	KVFDP_TRY(validate(cfg_, logical_bytes));
	return run_passes(
		placement, sink, progress,
		[&](sim::BlockSink &s, LifetimeRecorder *rec, const std::vector<uint8_t> *oracle,
		    sim::Progress *p) -> Result<void> {
			Tier tier(cfg_, logical_lbas, lba_size, s, placement, rec, oracle, stats_);
			return tier.run(logical_bytes, p);
		});
}

nlohmann::json DiskTierWorkload::extra() const
{
	const DiskTierStats &s = stats_;
	const double a = s.accesses ? static_cast<double>(s.accesses) : 1.0;
	return {{"slots", s.slots},
		{"slot_bytes", s.slot_bytes},
		{"ranks", cfg_.ranks},
		{"accesses", s.accesses},
		{"host_hits", s.host_hits},
		{"disk_hits", s.disk_hits},
		{"host_hit_ratio", static_cast<double>(s.host_hits) / a},
		{"disk_hit_ratio", static_cast<double>(s.disk_hits) / a},
		{"distinct_written", s.distinct_written},
		{"disk_writes", s.disk_writes},
		{"filtered", s.filtered},
		{"fill_bytes", s.fill_bytes},
		{"fill_writer", s.fill_writer}};
}

}  // namespace kvfdp::workload
