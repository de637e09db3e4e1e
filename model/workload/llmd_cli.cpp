// The --workload llmd factory: its options, and the workload built from them.
#include "model/workload/llmd_cli.hpp"

#include <cstdlib>
#include <memory>

#include <CLI/CLI.hpp>

#include "model/workload/cli.hpp"
#include "model/workload/llmd.hpp"

namespace kvfdp::workload {

namespace {

// The evictor's options as typed (parsed when the workload is built).
struct LlmdOptions {
	std::string marks = "85,70";  // HIGH,LOW percent (llm-d's defaults)
	std::string order = "hash";   // llmd_order_names()
	double recent = 0.05;         // share of the filesystem's capacity written
	CLI::App *sub = nullptr;
};

// The value of an option of sub (simulate's or simulate_factory's), as typed or its default.
std::string option_text(CLI::App *sub, const char *name)
{
	CLI::Option *opt = sub ? sub->get_option_no_throw(name) : nullptr;
	return opt ? opt->as<std::string>() : std::string();
}

void add_options(CLI::App &cmd, LlmdOptions &o)
{
	o.sub = &cmd;
	cmd.add_option("--evict-marks", o.marks,
		       "--workload llmd: the evictor's usage marks HIGH,LOW in percent of the "
		       "capacity: deletion starts at HIGH and stops at LOW (llm-d: 85,70)")
		->capture_default_str();
	cmd.add_option("--evict-order", o.order,
		       "--workload llmd: the order the evictor deletes in: hash (its crawler's "
		       "scan of the hash-named files), lru (least recently read) or fifo "
		       "(oldest written)")
		->check(CLI::IsMember(llmd_order_names()))
		->capture_default_str();
	cmd.add_option("--evict-recent", o.recent,
		       "--workload llmd: a file read or written within this share of the "
		       "capacity written is not deleted (llm-d: 60 minutes of atime)")
		->capture_default_str();
}

Result<std::unique_ptr<sim::Workload>> make(const LlmdOptions &l, const model::ModelConfig &cfg,
					    const sim::WorkloadPoint &at)
{
	const std::string trace_path = option_text(l.sub, "--kv-trace");
	if (trace_path.empty() || !option_text(l.sub, "--blk-trace").empty())
		return guidance_error(
			std::errc::invalid_argument,
			"--workload llmd replays a Mooncake trace through vLLM's file "
			"tier: pass --kv-trace FILE (and no --blk-trace)");
	LlmdConfig c;
	auto marks = parse_llmd_marks(at.marks.empty() ? l.marks : at.marks);
	if (!marks)
		return std::move(marks).error();
	c.marks = *marks;
	const std::string order = at.evict.empty() ? l.order : at.evict;
	const auto &names = llmd_order_names();
	for (size_t i = 0; i < names.size(); i++)
		if (names[i] == order)
			c.order = static_cast<LlmdOrder>(i);
	c.recent = l.recent;
	// simulate validated --util before asking its factories.
	const std::string util = option_text(l.sub, "--util");
	c.utilisation = at.util        ? *at.util
			: util.empty() ? 1.0
				       : std::strtod(util.c_str(), nullptr);
	auto chunk =
		chunk_bytes_for(option_text(l.sub, "--kv-model"), option_text(l.sub, "--kv-scale"));
	if (!chunk)
		return std::move(chunk).error();
	c.block_bytes = *chunk;
	KVFDP_TRY(LlmdWorkload::validate(c, cfg.logical_bytes));
	const std::string requests = option_text(l.sub, "--kv-requests");
	auto trace = load_mooncake(trace_path, std::strtoull(requests.c_str(), nullptr, 10));
	if (!trace)
		return std::move(trace).error();
	std::string name = trace_path;
	if (auto slash = name.rfind('/'); slash != std::string::npos)
		name = name.substr(slash + 1);
	return std::unique_ptr<sim::Workload>(
		std::make_unique<LlmdWorkload>("llmd:" + name, std::move(*trace), c));
}

}  // namespace

sim::WorkloadFactory llmd_factory()
{
	auto st = std::make_shared<LlmdOptions>();
	sim::WorkloadFactory f;
	f.names = {std::string(kLlmdWorkload)};
	f.add_options = [st](CLI::App &sub) { add_options(sub, *st); };
	f.make = [st](const std::string &name, const model::ModelConfig &cfg,
		      const sim::WorkloadPoint &at) -> Result<std::unique_ptr<sim::Workload>> {
		if (name != kLlmdWorkload)
			return std::unique_ptr<sim::Workload>();
		return make(*st, cfg, at);
	};
	f.evictions = [](const std::string &name) {
		return name == kLlmdWorkload ? llmd_order_names() : std::vector<std::string>{};
	};
	f.marks = [](const std::string &name) {
		return name == kLlmdWorkload ? llmd_advise_marks() : std::vector<std::string>{};
	};
	return f;
}

const std::vector<std::string> &llmd_advise_marks()
{
	static const std::vector<std::string> marks = {"95,89", "90,80", "85,70",
						       "80,60", "70,50", "60,40"};
	return marks;
}

const char *evict_option_for(std::string_view workload)
{
	return workload == kLlmdWorkload ? "--evict-order" : "--kv-evict";
}

}  // namespace kvfdp::workload
