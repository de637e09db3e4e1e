// TwinModels: the twin's two sampled FDP SSD models side by side, fed the same records:
// `placed` writes each on the handle kvfdpd chose, `none` everything on handle 0. What they
// measured, scaled back to the whole drive, is a TwinReport.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/result.hpp"
#include "model/ftl/ftl.hpp"
#include "model/twin/ring.hpp"
#include "model/twin/sampler.hpp"
#include "model/twin/window.hpp"

namespace kvfdp::twin {

// What the twin projects. Bytes are the sampled models' divided by the rate (the drive's
// estimate); the WAFs are media / host of each copy since the twin started.
struct TwinReport {
	double rate = 0;                   // fraction of the LBA space (and of each RU) modelled
	uint64_t memory_bytes = 0;         // both models, the recent window and the rings
	uint64_t region_bytes = 0;         // sampling granularity
	uint64_t model_logical_bytes = 0;  // the sampled model's capacity
	uint64_t model_ru_bytes = 0;       // the sampled model's RU size
	uint64_t records = 0;              // records applied
	uint64_t dropped = 0;              // records lost to full rings
	uint64_t model_errors = 0;         // model writes refused (out of space); the copies go on
	uint64_t host_bytes = 0;           // projected host bytes written (the same in both copies)
	uint64_t media_bytes_placed = 0;   // projected media bytes with kvfdpd's placement
	uint64_t media_bytes_none = 0;     // projected media bytes with every write on handle 0
	uint64_t relocated_bytes_placed = 0;
	uint64_t relocated_bytes_none = 0;
	double waf_placed = 0;  // 0 until something was written
	double waf_none = 0;
	// Media bytes placement saved the drive: media_bytes_none - media_bytes_placed (may be < 0).
	int64_t saved_bytes = 0;
	// The placed copy's host and GC-relocated bytes by handle, projected (index = handle).
	std::vector<model::HandleStats> handles_placed;
};

class TwinModels {
public:
	[[nodiscard]] static Result<std::unique_ptr<TwinModels>> create(const TwinPlan &plan);

	// Applies one record to both copies: the pieces of [slba, slba + nlb) in kept regions,
	// at their slots, and puts them in the window (adjacent pieces as one record) at the
	// time set_now_ms gave. No allocation.
	void apply(const Record &r) noexcept;
	// The recent window the applied pieces go to (null: none); it must outlive this.
	void set_window(Window *w) { window_ = w; }
	// The time the next records are stamped with (the twin thread sets it once per pass).
	void set_now_ms(uint32_t ms) { now_ms_ = ms; }
	// The projection so far (dropped and memory_bytes are the caller's to fill).
	[[nodiscard]] TwinReport report() const;
	[[nodiscard]] const TwinPlan &plan() const { return plan_; }
	[[nodiscard]] const model::Ftl &placed() const { return *placed_; }
	[[nodiscard]] const model::Ftl &none() const { return *none_; }

private:
	TwinModels(const TwinPlan &plan, std::unique_ptr<model::Ftl> placed,
		   std::unique_ptr<model::Ftl> none);
	// r's pieces in the kept regions through apply_piece, those adjacent in the model's LBAs
	// as one.
	void apply_pieces(const Record &r) noexcept;
	void apply_piece(const Record &r, uint64_t mlba, uint64_t n) noexcept;
	// Adds a piece to pend_, first sending pend_ to the window unless the piece extends it.
	void note_piece(const Record &r, uint64_t mlba, uint64_t n) noexcept;
	void flush_piece() noexcept;

	TwinPlan plan_;
	RegionSampler sampler_;
	std::unique_ptr<model::Ftl> placed_;
	std::unique_ptr<model::Ftl> none_;
	uint64_t records_ = 0;
	uint64_t errors_ = 0;
	Window *window_ = nullptr;
	uint32_t now_ms_ = 0;
	Record pend_{};  // the window's next record while pieces extend it (nlb 0: none)
};

}  // namespace kvfdp::twin
