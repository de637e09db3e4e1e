// Picks the learner's grouping (Choice) by measurement: whoever runs shadow copies of the
// device model, one per choice, fed the same writes with that choice's placement (the
// simulator: model/sim/placer.hpp), reports each copy's host and media bytes; the selector
// keeps a decayed WAF per choice and moves to the one that writes least to the media, with
// hysteresis. docs/placement.md "Choosing by shadow models".
#pragma once

#include <array>
#include <cstdint>

#include "placement/learner.hpp"

namespace kvfdp::placement {

struct SelectorConfig {
	// Bytes of host writes over which the WAF is decayed (e-folding), and the host bytes a
	// copy must have seen before it counts (its first GC comes after a fill).
	double window_bytes = 0;
	double warmup_bytes = 0;
	// Move only to a choice whose WAF is this much lower than the current one's.
	double margin = 0.01;
};

class ChoiceSelector {
public:
	static constexpr unsigned kChoices = 3;  // Choice::learned, classes, writers

	explicit ChoiceSelector(const SelectorConfig &cfg) : cfg_(cfg) {}

	// The cumulative host and media bytes of choice c's shadow copy; failed = it can no
	// longer run (a write it refused), never chosen again.
	void report(Choice c, uint64_t host_bytes, uint64_t media_bytes, bool failed = false);
	// The choice to run now (stays until another is lower by the margin).
	[[nodiscard]] Choice pick();
	// The decayed WAF of choice c (0 while warming up or failed).
	[[nodiscard]] double waf(Choice c) const;
	[[nodiscard]] Choice current() const { return current_; }
	[[nodiscard]] uint32_t switches() const { return switches_; }

private:
	struct Copy {
		uint64_t host = 0, media = 0;  // last report
		double dhost = 0, dmedia = 0;  // decayed
		bool failed = false;
	};
	SelectorConfig cfg_;
	std::array<Copy, kChoices> copies_{};
	Choice current_ = Choice::learned;
	uint32_t switches_ = 0;
};

}  // namespace kvfdp::placement
