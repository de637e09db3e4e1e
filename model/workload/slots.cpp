// The slot store: per-worker windows of fixed slots, reused in write order or LRU with touches.
#include "model/workload/slots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "bpf/tag.h"
#include "placement/classes.hpp"
#include "model/workload/chunk_files.hpp"
#include "model/workload/lifetime.hpp"

namespace kvfdp::workload {

namespace {

constexpr uint64_t kBlock = 4096;  // objects and windows are whole 4 KiB blocks
constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint64_t kTailChunkBlocks = 256;  // the static tail is written 1 MiB at a time

// Worker i's share of the capacity: its --slot-windows entry, else its weight's part of
// utilisation (equal weights: utilisation / N).
double window_share(const std::vector<SlotWorker> &ws, size_t i, double utilisation)
{
	if (ws[i].window > 0)
		return ws[i].window;
	double sum = 0;
	for (const SlotWorker &w : ws)
		sum += w.weight > 0 ? w.weight : 1;
	const double mine = ws[i].weight > 0 ? ws[i].weight : 1;
	return utilisation * mine / sum;
}

// Worker i's writer id: its own, else its position + 1.
uint64_t writer_of(const std::vector<SlotWorker> &ws, size_t i)
{
	return ws[i].writer ? ws[i].writer : i + 1;
}

// The id of the fill and the static tail: one above every worker's.
uint64_t fill_id(const std::vector<SlotWorker> &ws)
{
	uint64_t m = 0;
	for (size_t i = 0; i < ws.size(); i++)
		m = std::max(m, writer_of(ws, i));
	return m + 1;
}

uint64_t scaled_bytes(uint64_t bytes, double scale)
{
	const auto b =
		static_cast<uint64_t>(std::llround(static_cast<double>(bytes) * scale / kBlock));
	return (b ? b : 1) * kBlock;
}

// One worker's window: slots [first, first + n) of the store, an LRU list over them.
struct Window {
	uint64_t start_block = 0;
	uint32_t first = 0, n = 0;
	uint64_t object_blocks = 0;
	uint32_t head = kNone, tail = kNone;  // least and most recently used
	uint64_t filled = 0;                  // slots written at least once
	uint64_t bytes = 0;                   // written so far (scheduling)
};

class Store {
public:
	Store(const SlotConfig &cfg, std::vector<SlotWorker> workers, uint64_t logical_lbas,
	      uint32_t lba_size, sim::BlockSink &sink, sim::Placement placement,
	      LifetimeRecorder *rec, const std::vector<uint8_t> *oracle, SlotStats &st)
	    : cfg_(cfg), w_(std::move(workers)), lbas_per_block_(kBlock / lba_size), sink_(sink),
	      placement_(placement), rec_(rec), oracle_(oracle), st_(st), rng_(cfg.seed)
	{
		(void)logical_lbas;
		uint64_t block = 0;
		uint32_t slots = 0;
		st_.workers.assign(w_.size(), {});
		for (size_t i = 0; i < w_.size(); i++) {
			Window win;
			win.object_blocks = scaled_bytes(w_[i].object_bytes, cfg.scale) / kBlock;
			win.start_block = block;
			win.first = slots;
			win.n = static_cast<uint32_t>(
				window_blocks(i, logical_lbas / lbas_per_block_) /
				win.object_blocks);
			block += uint64_t{win.n} * win.object_blocks;
			slots += win.n;
			win_.push_back(win);
			st_.workers[i].slots = win.n;
			st_.workers[i].object_bytes = win.object_blocks * kBlock;
		}
		prev_.assign(slots, kNone);
		next_.assign(slots, kNone);
		version_.assign(slots, LifetimeRecorder::kNever);
		tail_start_ = block;
		tail_blocks_ = static_cast<uint64_t>(
			cfg.static_tail * static_cast<double>(logical_lbas / lbas_per_block_));
		fill_id_ = fill_id(w_);
		st_.fill_writer = cfg.fill_writer || tail_blocks_ ? fill_id_ : 0;
	}

	// Blocks of worker i's window on a store of total blocks.
	uint64_t window_blocks(size_t i, uint64_t total) const
	{
		return static_cast<uint64_t>(window_share(w_, i, cfg_.utilisation) *
					     static_cast<double>(total));
	}

	void run(uint64_t logical_bytes, sim::Progress *progress)
	{
		if (cfg_.fill_writer)
			fill_slots();
		write_tail();
		uint64_t n = 0;
		bool filled = false, measuring = false;
		uint64_t measure_at = 0, end = 0;
		for (;;) {
			if (!filled) {
				filled = true;
				for (const Window &w : win_)
					filled = filled && w.filled == w.n;
				if (filled) {
					st_.fill_bytes = clock_;
					measure_at = clock_ +
						     static_cast<uint64_t>(
							     cfg_.warmup_writes *
							     static_cast<double>(logical_bytes));
					end = measure_at +
					      static_cast<uint64_t>(
						      cfg_.measure_writes *
						      static_cast<double>(logical_bytes));
				}
			}
			if (filled && !measuring && clock_ >= measure_at) {
				sink_.begin_measurement();
				measuring = true;
			}
			if (filled && clock_ >= end)
				break;
			const size_t i = pick(filled);
			write_next(i);
			if (progress && (++n % 256) == 0 && end)
				progress->update(static_cast<double>(clock_) /
						 static_cast<double>(end));
		}
		if (progress)
			progress->update(1.0);
	}

private:
	// The fill writer's first write of every slot, in LBA order (window by window); each
	// window's LRU order is then its slot order.
	void fill_slots()
	{
		for (Window &w : win_) {
			while (w.filled < w.n) {
				const uint32_t s = w.first + static_cast<uint32_t>(w.filled++);
				const uint64_t bytes = w.object_blocks * kBlock;
				version_[s] = born(bytes);
				const uint64_t block =
					w.start_block + uint64_t{s - w.first} * w.object_blocks;
				sink_.write(block * lbas_per_block_,
					    w.object_blocks * lbas_per_block_,
					    fill_class(version_[s]), fill_id_);
				push_mru(w, s);
				clock_ += bytes;
			}
		}
	}

	// The static tail, once, after the windows: versions that never die.
	void write_tail()
	{
		for (uint64_t b = 0; b < tail_blocks_; b += kTailChunkBlocks) {
			const uint64_t n = std::min(kTailChunkBlocks, tail_blocks_ - b);
			const uint64_t v = born(n * kBlock);
			sink_.write((tail_start_ + b) * lbas_per_block_, n * lbas_per_block_,
				    fill_class(v), fill_id_);
			clock_ += n * kBlock;
			st_.static_bytes += n * kBlock;
		}
	}

	// A new version of bytes at the current clock; its index.
	uint64_t born(uint64_t bytes)
	{
		if (rec_)
			rec_->birth(clock_, bytes);
		return versions_++;
	}

	// The fill's and the tail's class: no hint (the oracle's from their lifetimes).
	uint8_t fill_class(uint64_t version) const
	{
		if (placement_ == sim::Placement::oracle)
			return oracle_ && version < oracle_->size() ? (*oracle_)[version]
								    : uint8_t{KVFDP_CLASS_EXTREME};
		return KVFDP_CLASS_NOT_SET;
	}

	// The worker furthest behind its byte rate (while filling, among those not yet full).
	size_t pick(bool filled) const
	{
		size_t best = 0;
		double best_v = std::numeric_limits<double>::infinity();
		for (size_t i = 0; i < w_.size(); i++) {
			if (!filled && win_[i].filled == win_[i].n)
				continue;
			const double v = static_cast<double>(win_[i].bytes) / w_[i].rate;
			if (v < best_v) {
				best_v = v;
				best = i;
			}
		}
		return best;
	}

	void unlink_slot(Window &w, uint32_t s)
	{
		if (prev_[s] != kNone)
			next_[prev_[s]] = next_[s];
		else
			w.head = next_[s];
		if (next_[s] != kNone)
			prev_[next_[s]] = prev_[s];
		else
			w.tail = prev_[s];
		prev_[s] = next_[s] = kNone;
	}

	void push_mru(Window &w, uint32_t s)
	{
		prev_[s] = w.tail;
		next_[s] = kNone;
		if (w.tail != kNone)
			next_[w.tail] = s;
		else
			w.head = s;
		w.tail = s;
	}

	uint8_t classify(size_t i, uint64_t version) const
	{
		switch (placement_) {
		case sim::Placement::none: return KVFDP_CLASS_NOT_SET;
		case sim::Placement::oracle:
			return oracle_ && version < oracle_->size() ? (*oracle_)[version]
								    : uint8_t{KVFDP_CLASS_EXTREME};
		default: return w_[i].cls;
		}
	}

	void write_next(size_t i)
	{
		Window &w = win_[i];
		uint32_t s;
		if (w.filled < w.n) {
			s = w.first + static_cast<uint32_t>(w.filled++);
		} else {
			s = w.head;
			unlink_slot(w, s);
		}
		const uint64_t bytes = w.object_blocks * kBlock;
		if (rec_ && version_[s] != LifetimeRecorder::kNever)
			rec_->death(version_[s], clock_);
		const uint64_t v = born(bytes);
		version_[s] = v;
		const uint64_t block = w.start_block + uint64_t{s - w.first} * w.object_blocks;
		sink_.write(block * lbas_per_block_, w.object_blocks * lbas_per_block_,
			    classify(i, v), writer_of(w_, i));
		push_mru(w, s);
		clock_ += bytes;
		w.bytes += bytes;
		st_.workers[i].objects++;
		st_.workers[i].bytes += bytes;
		// Touches: a uniformly chosen object of the window becomes the most recently used.
		const double t = w_[i].touches;
		uint64_t k = static_cast<uint64_t>(t);
		if (t > static_cast<double>(k) && unit_(rng_) < t - static_cast<double>(k))
			k++;
		const auto live = static_cast<uint32_t>(w.filled);
		for (uint64_t j = 0; j < k && live > 1; j++) {
			const uint32_t x =
				w.first +
				static_cast<uint32_t>(
					std::uniform_int_distribution<uint32_t>(0, live - 1)(rng_));
			unlink_slot(w, x);
			push_mru(w, x);
			st_.workers[i].touches++;
		}
	}

	const SlotConfig &cfg_;
	std::vector<SlotWorker> w_;
	uint64_t lbas_per_block_;
	sim::BlockSink &sink_;
	sim::Placement placement_;
	LifetimeRecorder *rec_;
	const std::vector<uint8_t> *oracle_;
	SlotStats &st_;
	std::mt19937_64 rng_;
	std::uniform_real_distribution<double> unit_{0.0, 1.0};
	std::vector<Window> win_;
	std::vector<uint32_t> prev_, next_;
	std::vector<uint64_t> version_;
	uint64_t versions_ = 0;
	uint64_t clock_ = 0;
	uint64_t tail_start_ = 0, tail_blocks_ = 0;  // the static tail, in 4 KiB blocks
	uint64_t fill_id_ = 0;
};

}  // namespace

std::vector<SlotWorker> default_slot_workers()
{
	constexpr uint64_t MiB = 1 << 20;
	// Window weights: the published sizes in units of 45 GiB (90, 180, 45 GiB).
	return {
		{"chat0", 4 * MiB, 1, 0, 2, 1.0, KVFDP_CLASS_SHORT},
		{"chat1", 4 * MiB, 1, 0, 2, 1.0, KVFDP_CLASS_SHORT},
		{"long_context", 32 * MiB, 1, 0, 4, 0.5, KVFDP_CLASS_LONG},
		{"rag0", 16 * MiB, 1, 0, 2, 2.0, KVFDP_CLASS_MEDIUM},
		{"rag1", 16 * MiB, 1, 0, 2, 2.0, KVFDP_CLASS_MEDIUM},
		{"random0", 2 * MiB, 1, 0, 2, 0.0, KVFDP_CLASS_NOT_SET},
		{"random1", 2 * MiB, 1, 0, 2, 0.0, KVFDP_CLASS_NOT_SET},
		{"random2", 2 * MiB, 1, 0, 2, 0.0, KVFDP_CLASS_NOT_SET},
		{"metadata", 1 * MiB, 1, 0, 1, 1.0, KVFDP_CLASS_EXTREME},
	};
}

SlotWorkload::SlotWorkload(SlotConfig cfg) : cfg_(std::move(cfg))
{
	if (cfg_.workers.empty())
		cfg_.workers = default_slot_workers();
}

Result<void> SlotWorkload::validate(const SlotConfig &cfg, uint64_t capacity_bytes)
{
	const std::vector<SlotWorker> ws =
		cfg.workers.empty() ? default_slot_workers() : cfg.workers;
	const uint64_t total = capacity_bytes / kBlock;
	uint64_t used = 0;
	char buf[320];
	if (!(cfg.static_tail >= 0 && cfg.static_tail < 1))
		return guidance_error(std::errc::invalid_argument,
				      "--slot-static-tail: give a share of the capacity in [0, 1)");
	for (size_t i = 0; i < ws.size(); i++) {
		const SlotWorker &w = ws[i];
		if (!(w.rate > 0) || !(w.touches >= 0) || !(w.window >= 0) || w.object_bytes == 0) {
			std::snprintf(buf, sizeof buf,
				      "slot worker %s: rate must be > 0, touches >= 0, object > 0",
				      w.name.c_str());
			return guidance_error(std::errc::invalid_argument, buf);
		}
		const double share = window_share(ws, i, cfg.utilisation);
		const auto blocks = static_cast<uint64_t>(share * static_cast<double>(total));
		const uint64_t obj = scaled_bytes(w.object_bytes, cfg.scale) / kBlock;
		if (blocks / obj < 2) {
			std::snprintf(
				buf, sizeof buf,
				"--slot-windows: slot worker %s's window (%.4g of the capacity) holds fewer than 2 objects of %llu bytes; "
				"raise --capacity or its --slot-windows share, or lower --kv-scale",
				w.name.c_str(), share,
				static_cast<unsigned long long>(obj * kBlock));
			return guidance_error(std::errc::invalid_argument, buf);
		}
		used += blocks / obj * obj;
		if (used > total) {
			std::snprintf(
				buf, sizeof buf,
				"--slot-windows: the windows up to slot worker %s take %.4g of the capacity; give shares that sum to at most 1",
				w.name.c_str(),
				static_cast<double>(used) / static_cast<double>(total));
			return guidance_error(std::errc::invalid_argument, buf);
		}
	}
	const auto tail = static_cast<uint64_t>(cfg.static_tail * static_cast<double>(total));
	if (used + tail > total) {
		const double taken = static_cast<double>(used) / static_cast<double>(total);
		std::snprintf(
			buf, sizeof buf,
			"--slot-static-tail: the windows take %.4g of the capacity and the tail %.4g; give a tail of at most %.4g or smaller windows",
			taken, cfg.static_tail, 1 - taken);
		return guidance_error(std::errc::invalid_argument, buf);
	}
	return ok();
}

Result<void> SlotWorkload::run(sim::Placement placement, uint64_t logical_lbas, uint32_t lba_size,
			       sim::BlockSink &sink, sim::Progress *progress)
{
	if (lba_size > kBlock || kBlock % lba_size)
		return guidance_error(std::errc::invalid_argument,
				      "--workload slots needs an LBA size of at most 4096");
	const uint64_t logical_bytes = logical_lbas * lba_size;
	KVFDP_TRY(validate(cfg_, logical_bytes));
	return run_passes(placement, sink, progress,
			  [&](sim::BlockSink &s, LifetimeRecorder *rec,
			      const std::vector<uint8_t> *oracle,
			      sim::Progress *p) -> Result<void> {
				  stats_ = SlotStats{};
				  Store store(cfg_, cfg_.workers, logical_lbas, lba_size, s,
					      placement, rec, oracle, stats_);
				  store.run(logical_bytes, p);
				  return ok();
			  });
}

nlohmann::json SlotWorkload::extra() const
{
	nlohmann::json ws = nlohmann::json::array();
	for (size_t i = 0; i < stats_.workers.size() && i < cfg_.workers.size(); i++) {
		const auto &w = stats_.workers[i];
		ws.push_back({{"name", cfg_.workers[i].name},
			      {"writer", writer_of(cfg_.workers, i)},
			      {"class", placement::class_name(cfg_.workers[i].cls)},
			      {"slots", w.slots},
			      {"object_bytes", w.object_bytes},
			      {"objects", w.objects},
			      {"bytes", w.bytes},
			      {"touches", w.touches}});
	}
	return {{"fill_bytes", stats_.fill_bytes},
		{"static_bytes", stats_.static_bytes},
		{"fill_writer", stats_.fill_writer},
		{"workers", ws}};
}

}  // namespace kvfdp::workload
