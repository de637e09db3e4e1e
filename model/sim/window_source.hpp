// `kvfdp advise --twin`: the recent window of a running kvfdpd's WAF twin (proto::TwinWindow)
// as advise's source. Each run fills the sampled model's capacity once (the data a running
// drive holds), then replays the window over it until it has written that capacity again:
// the window's pattern in steady state at each utilisation (docs/advise.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "model/ftl/model_config.hpp"
#include "proto/twin_window.hpp"
#include "model/sim/advise.hpp"
#include "model/sim/workload.hpp"

namespace kvfdp::sim {

// The most times a run replays the window (a short window on a large model).
inline constexpr uint32_t kMaxWindowPasses = 64;

// The window as a workload in the sampled model's LBAs: the fill as the writer of handle 0,
// begin_measurement, then the passes. Each write's writer is its handle + 1, so writer
// placement puts it where kvfdpd did; every class is 0, so hint is none.
class WindowWorkload final : public Workload {
public:
	explicit WindowWorkload(proto::TwinWindow w);
	[[nodiscard]] std::string name() const override { return "kvfdpd's twin window"; }
	[[nodiscard]] Result<void> run(Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, BlockSink &sink,
				       Progress *progress) override;
	// The passes a run makes: enough to write the model's capacity, 1..kMaxWindowPasses.
	[[nodiscard]] uint32_t passes() const { return passes_; }
	[[nodiscard]] const proto::TwinWindow &window() const { return w_; }

private:
	proto::TwinWindow w_;
	uint64_t traced_lbas_ = 0;  // the sampled model's capacity
	uint32_t passes_ = 1;
};

// Why w cannot be advised from (one line that says what to do), "" when it can: an empty
// window, one without writes, or a model shape the model refuses.
[[nodiscard]] std::string window_refusal(const proto::TwinWindow &w);
// The sampled model of w at utilisation util: its capacity over util, rounded up to a
// mapping unit.
[[nodiscard]] model::ModelConfig window_model_at(const proto::TwinWindow &w, double util);

class WindowSource final : public AdviseSource {
public:
	// saved: the file the window was saved to or read from ("": none, so no check command);
	// target: --target as given, for the check command.
	WindowSource(proto::TwinWindow w, std::string saved, std::string target);

	[[nodiscard]] std::string name() const override { return workload_.name(); }
	[[nodiscard]] std::vector<Placement> placements() const override;
	[[nodiscard]] std::vector<std::string> evictions() const override { return {}; }
	[[nodiscard]] Result<RunReport> run(const AdviseSetting &s) override;
	// `kvfdp advise --window FILE` at s alone: the same run, from the saved window.
	[[nodiscard]] std::string simulate_command(const AdviseSetting &s) const override;
	// Where the window came from (rate, records, span) and what UTIL means for it.
	[[nodiscard]] std::string util_note() const override;
	// The window's figures for -o json: rate, records, total, capacity, span_ms, age_ms,
	// dropped, passes, model.
	[[nodiscard]] nlohmann::ordered_json source_json() const;

private:
	WindowWorkload workload_;
	std::string saved_;
	std::string target_;
};

}  // namespace kvfdp::sim
