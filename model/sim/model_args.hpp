// The options `kvfdp simulate` and `kvfdp advise` share: the model's shape, the workload and
// its knobs, parsed so that every error names its option; and the workload they build.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/ftl/model_config.hpp"
#include "model/sim/cmd_simulate.hpp"
#include "model/sim/workload.hpp"

namespace CLI {
class App;
}

namespace kvfdp::sim {

// Option values as typed; parse_model_args turns them into a config and knobs.
struct ModelArgs {
	std::string workload = "uniform";
	std::string capacity = "4GiB";
	std::string op = "0.28";
	std::string ru_size = "1MiB";
	std::string handles = "8";
	std::string util = "1";
	std::string gc = "greedy";
	std::string mapping_unit = "4KiB";
	std::string lba_size = "4096";
	std::string seed = "1";
	std::string writes = "3";
	std::string ruh_types = "initially";
};

// The parsed numbers a workload takes from the shared options.
struct Knobs {
	double util = 1, writes = 3;
	uint64_t seed = 1;
};

// Adds --workload (help lists workload_names), --capacity, --op, --ru-size, --handles,
// --util, --gc, --mapping-unit, --lba-size, --writes, --seed and --ruh-types to sub.
void add_model_options(CLI::App &sub, ModelArgs &a, const std::string &workload_names);

// The workload names simulate knows: "uniform|hotcold" then each factory's, '|' apart.
[[nodiscard]] std::string workload_names(const std::vector<WorkloadFactory> &factories);

// Parses a into *cfg and *k and validates the model. Returns the one-line error naming the
// option (or "model: ..." with the options to change), or "" when all is well.
[[nodiscard]] std::string parse_model_args(const ModelArgs &a, model::ModelConfig *cfg, Knobs *k);

// The workload a.workload names (a factory's, or uniform / hotcold) against cfg, at the
// point at (a --sweep util point, an eviction order) in place of the options. nullptr and
// *errp set when it cannot be made.
[[nodiscard]] std::unique_ptr<Workload> make_workload(const ModelArgs &a,
						      const std::vector<WorkloadFactory> &factories,
						      const model::ModelConfig &cfg, const Knobs &k,
						      const WorkloadPoint &at, std::string *errp);

// --placement: "all" (what w supports) or one placement or a comma list of them; sets *err
// to the one-line error and returns {} for a name that is not one or that w cannot run.
[[nodiscard]] std::vector<Placement> placements_arg(const std::string &arg, const Workload &w,
						    std::string *err);

// A bar on stderr while a run goes on: "simulate uniform/none [#######.......]  35%"; cleared
// when destroyed.
class TtyProgress final : public Progress {
public:
	explicit TtyProgress(std::string label) : label_(std::move(label)) {}
	~TtyProgress() override;
	TtyProgress(const TtyProgress &) = delete;
	TtyProgress &operator=(const TtyProgress &) = delete;
	void update(double f) override;

private:
	std::string label_;
	int shown_ = -1;
};

// A TtyProgress labelled label when stderr is a terminal, else nullptr (no bar).
[[nodiscard]] std::unique_ptr<TtyProgress> tty_progress(const std::string &label);

}  // namespace kvfdp::sim
