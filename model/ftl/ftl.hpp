// Ftl: the FDP SSD model's flash translation layer: reclaim units, handles, GC, accounting.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.hpp"
#include "model/ftl/model_config.hpp"

namespace kvfdp::model {

// Cumulative counters, in bytes unless named otherwise. host/media/erased bytes are the
// FDP statistics log's HBMW, MBMW and MBE.
struct Stats {
	uint64_t host_bytes = 0;         // HBMW: bytes the host wrote
	uint64_t media_bytes = 0;        // MBMW: bytes programmed (host units + GC relocation)
	uint64_t erased_bytes = 0;       // MBE: ru_size per reclaim unit erased
	uint64_t gc_runs = 0;            // reclaim units reclaimed (erased) by GC
	uint64_t relocated_bytes = 0;    // bytes GC copied
	uint64_t deallocated_bytes = 0;  // bytes of mapping units the host deallocated

	// Counters accumulated since `before` (which must be an earlier sample).
	[[nodiscard]] Stats since(const Stats &before) const;
	// media_bytes / host_bytes; 0 when nothing was written.
	[[nodiscard]] double waf() const;
};

// One handle's share of the host and GC traffic, in bytes (cumulative).
struct HandleStats {
	uint64_t host_bytes = 0;  // bytes the host wrote through the handle
	// Bytes GC relocated out of RUs the handle owned (ru_owner: its host stream's RUs, and
	// its own GC stream's when persistently isolated). Data the shared GC stream holds is no
	// handle's: its later relocations are in Stats::relocated_bytes only.
	uint64_t relocated_bytes = 0;
};

// RU counts in one reclaim group (free + open + full == rus_per_rg outside GC).
struct RuCounts {
	uint32_t free = 0;
	uint32_t open = 0;
	uint32_t full = 0;
};

// The model. Handle index h in [0, nrg * nruh) names reclaim group h / nruh and reclaim
// unit handle h % nruh (RUH Status order). Single-threaded; no allocation after create().
class Ftl {
public:
	static Result<std::unique_ptr<Ftl>> create(const ModelConfig &cfg);

	// Host write of nlb LBAs at slba on handle h: 0, -EINVAL (h or range invalid), or
	// -ENOSPC (the reclaim group has no reclaimable space; data written through one group's
	// handles must fit in that group).
	[[nodiscard]] int write(uint32_t h, uint64_t slba, uint64_t nlb);
	// Deallocates (trims) the mapping units wholly inside [slba, slba + nlb); a partly
	// covered unit stays mapped. 0 or -EINVAL.
	[[nodiscard]] int deallocate(uint64_t slba, uint64_t nlb);
	// RUH Update of handle h: its open RU (if any) is closed as it stands, so the next write
	// through h opens a fresh one; the unwritten rest of the closed RU is lost to the host
	// until GC reclaims that RU. 0, or -EINVAL for an invalid h.
	[[nodiscard]] int ruh_update(uint32_t h);

	[[nodiscard]] const Stats &stats() const { return stats_; }
	[[nodiscard]] const ModelConfig &config() const { return cfg_; }
	[[nodiscard]] uint64_t logical_lbas() const { return logical_lbas_; }
	[[nodiscard]] uint32_t handles() const { return uint32_t{cfg_.nrg} * cfg_.nruh; }
	[[nodiscard]] uint32_t units_per_ru() const { return upr_; }
	[[nodiscard]] uint32_t rus_per_rg() const { return rus_per_rg_; }
	// RUAMW of handle h: LBAs left in the RU it writes to (a whole RU before its first write).
	[[nodiscard]] uint64_t ruamw(uint32_t h) const;
	// True once the host wrote through handle h (RUH usage log: host specified).
	[[nodiscard]] bool handle_used(uint32_t h) const { return used_[h] != 0; }
	[[nodiscard]] HandleType handle_type(uint32_t ruh) const;
	// Host and GC-relocated bytes of handle h (h < handles()): where GC's copies come from.
	[[nodiscard]] const HandleStats &handle_stats(uint32_t h) const { return handle_stats_[h]; }
	[[nodiscard]] RuCounts ru_counts(uint32_t rg) const;
	// Mapped logical mapping units (live data).
	[[nodiscard]] uint64_t live_units() const { return live_units_; }
	// The RU holding lba's mapping unit, or kNoRu when it is unmapped.
	static constexpr uint32_t kNoRu = 0xFFFFFFFF;
	[[nodiscard]] uint32_t ru_of_lba(uint64_t lba) const;
	// Whose data RU ru holds: the reclaim unit handle (ruh) of its host stream or of its
	// persistently isolated GC stream, or -1 for the shared GC stream (and free RUs).
	[[nodiscard]] int ru_owner(uint32_t ru) const;

	// Bytes create(cfg) allocates for a valid cfg (its flat arrays): what the live twin
	// (model/twin/) sizes its sampled models by.
	[[nodiscard]] static uint64_t memory_for(const ModelConfig &cfg);
	// Bytes this model's arrays hold (their capacities); memory_for(config()) after create().
	[[nodiscard]] uint64_t memory_bytes() const;

	// Full O(capacity) consistency check, for tests: valid counts match the reverse map,
	// every mapped unit is mapped exactly once, RU states add up. The error names the first
	// violation.
	[[nodiscard]] Result<void> check_invariants() const;

	Ftl(const Ftl &) = delete;
	Ftl &operator=(const Ftl &) = delete;
	~Ftl();

private:
	explicit Ftl(const ModelConfig &cfg);
	struct Stream {
		uint32_t ru;  // kNone when the stream has no open RU
		uint32_t wp;  // units programmed into ru
	};
	enum RuState : uint8_t { kFree = 0, kOpen = 1, kFull = 2, kVictim = 3 };

	int program(uint32_t rg, uint32_t s, uint32_t lu);
	void program_run(Stream &st, uint32_t lu, uint32_t n);
	int open_ru(uint32_t rg, uint32_t s);
	void close_ru(uint32_t ru);
	void invalidate(uint32_t p);
	// k (> 0) units of ru no longer valid, its bucket kept in step.
	void drop_valid(uint32_t ru, uint32_t k);
	void run_gc(uint32_t rg);
	uint32_t pick_victim(uint32_t rg) const;
	int reclaim(uint32_t rg, uint32_t victim);
	void bucket_insert(uint32_t ru);
	void bucket_remove(uint32_t ru);
	[[nodiscard]] uint32_t streams_per_rg() const { return 2u * cfg_.nruh + 1; }
	// check_invariants' phases, each naming the first violation it finds: the RUs against
	// the reverse map (returns the units valid in all RUs), the forward map against it, one
	// group's lists and streams, its greedy buckets (full: the group's full RUs).
	[[nodiscard]] Result<uint64_t> check_rus() const;
	[[nodiscard]] Result<void> check_mapping(uint64_t sum_valid) const;
	[[nodiscard]] Result<void> check_group(uint32_t rg) const;
	[[nodiscard]] Result<void> check_buckets(uint32_t rg, uint32_t full) const;
	// The per-handle counters against stats_ (host bytes add up, relocations within).
	[[nodiscard]] Result<void> check_handle_stats() const;

	ModelConfig cfg_;
	uint64_t logical_lbas_ = 0;
	uint32_t lbas_per_unit_ = 0;
	uint32_t logical_units_ = 0;
	uint32_t upr_ = 0;  // mapping units per RU
	uint32_t rus_per_rg_ = 0;
	uint32_t total_rus_ = 0;
	uint32_t gc_low_ = 0;
	uint32_t gc_high_ = 0;
	bool in_gc_ = false;
	bool buckets_on_ = false;  // greedy keeps full RUs in per-valid-count lists
	uint64_t clock_ = 0;       // units programmed, the age clock of cost-benefit
	uint64_t live_units_ = 0;
	Stats stats_;

	std::vector<uint32_t> l2p_;          // logical unit -> physical unit, kUnmapped
	std::vector<uint32_t> p2l_;          // physical unit -> logical unit, kInvalid
	std::vector<uint32_t> valid_;        // per RU
	std::vector<uint8_t> state_;         // per RU, RuState
	std::vector<uint16_t> owner_;        // per RU: handle (ruh) whose data it holds, kShared
	std::vector<uint64_t> closed_at_;    // per RU: clock_ when it became full
	std::vector<uint32_t> next_, prev_;  // per RU: bucket links
	std::vector<uint32_t> heads_;        // per RG x (upr + 1): bucket heads
	std::vector<uint32_t> free_;         // per RG stacks of free RUs, rus_per_rg each
	std::vector<uint32_t> nfree_;        // per RG
	std::vector<uint32_t> nopen_;        // per RG
	std::vector<Stream> streams_;        // per RG x streams_per_rg: host h, shared GC, GC of h
	std::vector<uint8_t> used_;          // per handle
	std::vector<HandleStats> handle_stats_;  // per handle
	std::vector<uint8_t> persistent_;        // per ruh
};

}  // namespace kvfdp::model
