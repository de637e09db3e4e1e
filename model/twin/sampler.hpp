// Spatial sampling for the twin: which LBA regions it keeps (a fixed pseudo-random choice
// of exactly `kept` of them), where each kept region lies in the sampled model, and the plan
// that picks the sampling rate so two sampled models fit a memory bound.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/result.hpp"
#include "model/ftl/model_config.hpp"

namespace kvfdp::twin {

// A pseudo-random permutation pi of [0, regions) (cycle-walking over mixing rounds on the
// next power of two): region r is kept iff pi(r) < kept, and then lies at slot pi(r) of the
// sampled model. kept == regions is the identity. Deterministic: the same (regions, kept)
// always keeps the same regions.
class RegionSampler {
public:
	static constexpr uint64_t kNotKept = ~uint64_t{0};
	RegionSampler() = default;
	RegionSampler(uint64_t regions, uint64_t kept);

	// r's slot in [0, kept), or kNotKept.
	[[nodiscard]] uint64_t slot(uint64_t r) const
	{
		if (identity_)
			return r < kept_ ? r : kNotKept;
		const uint64_t p = permute(r);
		return p < kept_ ? p : kNotKept;
	}
	// The region at slot s (s < kept).
	[[nodiscard]] uint64_t region_of(uint64_t s) const;
	[[nodiscard]] uint64_t regions() const { return regions_; }
	[[nodiscard]] uint64_t kept() const { return kept_; }
	// Every region is kept at its own slot (kept == regions).
	[[nodiscard]] bool identity() const { return identity_; }

private:
	[[nodiscard]] uint64_t round(uint64_t x) const;
	[[nodiscard]] uint64_t unround(uint64_t x) const;
	[[nodiscard]] uint64_t permute(uint64_t r) const
	{
		uint64_t x = round(r);
		while (x >= regions_)
			x = round(x);
		return x;
	}

	uint64_t regions_ = 0;
	uint64_t kept_ = 0;
	bool identity_ = true;
	uint64_t mask_ = 0;   // next power of two >= regions, minus 1
	uint32_t shift_ = 1;  // xorshift of each round
};

// The drive the twin mirrors.
struct TwinGeometry {
	uint64_t nlb = 0;  // ublk device size in LBAs
	uint32_t lba_size = 4096;
	uint64_t ru_size = 0;  // the drive's RU size (RUNS); 0: unknown
	uint16_t nruh = 1;     // kvfdpd's handles (the placed copy writes through them)
	double op = 0.07;      // over-provisioning the model assumes
	model::GcPolicy gc = model::GcPolicy::greedy;
};

// Where records go: the sampled model's config (both copies) and the sampling.
struct TwinPlan {
	model::ModelConfig model;
	uint64_t region_lbas = 0;  // sampling granularity in device LBAs
	uint64_t regions = 0;      // of the device
	uint64_t kept = 0;         // regions sampled
	uint32_t ru_units = 0;     // mapping units per RU: the drive's, and the sampled model's
	uint32_t sampled_ru_units = 0;
	double rate = 1;  // sampled_ru_units / ru_units: capacity and RU size are scaled by it
	uint64_t memory_bytes = 0;    // both models
	uint64_t window_records = 0;  // the recent window's bound (plan_twin; 0 from plan_twin_at)
};

// Regions are one mapping unit (4 KiB): coarser regions keep or drop whole extents that
// die together, and the sampled model's RUs then read emptier than the drive's
// (docs/twin.md, Accuracy).
// The default memory bound of the twin's models.
inline constexpr uint64_t kDefaultMemoryBytes = 64ull << 20;

// The recent window (window.hpp) takes 1/kWindowShare of the twin's memory bound, in records
// of kWindowRecordBytes (a 16-byte record and its 4-byte time); the models take the rest.
inline constexpr uint64_t kWindowShare = 16;
inline constexpr uint64_t kWindowRecordBytes = 20;
[[nodiscard]] constexpr uint64_t window_records_for(uint64_t memory_bytes)
{
	return memory_bytes / kWindowShare / kWindowRecordBytes;
}

// kvfdpd's option that sets the memory bound: what a refused plan tells the user to change,
// unless the bound came from the config (TwinOptions::bound_name).
inline constexpr std::string_view kMemoryOption = "--twin-memory";

// The plan at sampled_ru_units mapping units per sampled RU (rate = that / the drive's);
// the drive's own count is the whole drive, unsampled.
[[nodiscard]] Result<TwinPlan> plan_twin_at(const TwinGeometry &g, uint32_t sampled_ru_units);
// The largest rate whose two models take at most memory_bytes less the recent window's
// share. Refused in one line: an unknown RU size, or a bound too small for the smallest
// sampled model (one mapping unit per RU) and the window, naming the bound that would do;
// `bound` is what the refusals tell the user to change (the option, or a config key).
[[nodiscard]] Result<TwinPlan> plan_twin(const TwinGeometry &g, uint64_t memory_bytes,
					 std::string_view bound = kMemoryOption);

}  // namespace kvfdp::twin
