// The --workload kvbm / trtllm factory: its options, and the workload built from them.
#include "model/workload/disk_tier_cli.hpp"

#include <cstdlib>
#include <memory>

#include <CLI/CLI.hpp>

#include "model/workload/cli.hpp"
#include "model/workload/disk_tier.hpp"
#include "model/workload/mooncake.hpp"
#include "model/workload/presets.hpp"

namespace kvfdp::workload {

namespace {

struct EngineOptions {
	EngineOptions() { cfg.ranks = 2; }  // tensor parallel 2
	DiskTierConfig cfg;
	uint32_t page_tokens =
		32;  // tokens per KV block (KVBM's page_size, TRT-LLM's tokens_per_block)
	std::string fill = "namespace";
	CLI::App *sub = nullptr;
};

// The value of an option of sub (simulate's or simulate_factory's), as typed or its default.
std::string option_text(CLI::App *sub, const char *name)
{
	CLI::Option *opt = sub ? sub->get_option_no_throw(name) : nullptr;
	return opt ? opt->as<std::string>() : std::string();
}

void add_options(CLI::App &cmd, EngineOptions &o)
{
	o.sub = &cmd;
	DiskTierConfig &c = o.cfg;
	cmd.add_option("--engine-keys", c.keys,
		       "--workload kvbm/trtllm: distinct KV blocks requested, per disk slot")
		->capture_default_str();
	cmd.add_option("--engine-zipf", c.zipf,
		       "--workload kvbm/trtllm: Zipf skew of the block requests")
		->capture_default_str();
	cmd.add_option(
		   "--engine-host", c.host,
		   "--workload kvbm/trtllm: host memory (GPU + pinned host tiers) in blocks, per disk slot")
		->capture_default_str();
	cmd.add_option(
		   "--engine-page-tokens", o.page_tokens,
		   "--workload kvbm/trtllm: tokens per KV block (KVBM page_size, TRT-LLM tokens_per_block)")
		->capture_default_str();
	cmd.add_option(
		   "--engine-fill", o.fill,
		   "--workload kvbm/trtllm: namespace (first write the whole namespace in LBA order "
		   "from a writer of its own) or none")
		->check(CLI::IsMember({"namespace", "none"}))
		->capture_default_str();
	cmd.add_option(
		   "--kvbm-filter", c.filter,
		   "--workload kvbm: the disk offload filter's frequency threshold (KVBM: 2; 1: "
		   "DYN_KVBM_DISABLE_DISK_OFFLOAD_FILTER)")
		->capture_default_str();
	cmd.add_option("--kvbm-decay", c.decay,
		       "--workload kvbm: block requests between the filter's decays, per disk slot "
		       "(KVBM: every 600 s)")
		->capture_default_str();
	cmd.add_option(
		   "--trtllm-ranks", c.ranks,
		   "--workload trtllm: ranks (tensor parallel), each with its own slot file and "
		   "writer id")
		->capture_default_str();
}

Result<std::unique_ptr<sim::Workload>> make(const EngineOptions &o, const std::string &name,
					    const model::ModelConfig &cfg,
					    const sim::WorkloadPoint &at)
{
	if (!option_text(o.sub, "--kv-trace").empty() || !option_text(o.sub, "--blk-trace").empty())
		return guidance_error(
			std::errc::invalid_argument,
			"--workload " + name +
				" generates its own requests; drop --kv-trace / --blk-trace");
	DiskTierConfig c = o.cfg;
	c.engine = name == "kvbm" ? DiskTierConfig::Engine::kvbm : DiskTierConfig::Engine::trtllm;
	if (c.engine == DiskTierConfig::Engine::kvbm) {
		CLI::Option *ranks = o.sub ? o.sub->get_option_no_throw("--trtllm-ranks") : nullptr;
		if (ranks && ranks->count())
			return guidance_error(
				std::errc::invalid_argument,
				"--trtllm-ranks is for --workload trtllm; KVBM writes one file");
		c.ranks = 1;
	}
	c.fill = o.fill == "namespace";
	const std::string model = option_text(o.sub, "--kv-model");
	auto chunk = chunk_bytes_for(model, option_text(o.sub, "--kv-scale"));
	if (!chunk)
		return std::move(chunk).error();
	auto preset = find_preset(model);
	const double block_tokens = kMooncakeBlockTokens;
	c.scale = static_cast<double>(*chunk) /
		  (static_cast<double>(preset->bytes_per_token) * block_tokens);
	if (o.page_tokens < 1 || o.page_tokens > 4096)
		return guidance_error(std::errc::invalid_argument,
				      "--engine-page-tokens: give 1 to 4096 tokens per block");
	c.block_bytes = preset->bytes_per_token * o.page_tokens;
	// The slot files' share: --util as typed, else 0.9 (simulate's own default is 1).
	CLI::Option *util_opt = o.sub ? o.sub->get_option_no_throw("--util") : nullptr;
	c.utilisation = util_opt && util_opt->count()
				? std::strtod(option_text(o.sub, "--util").c_str(), nullptr)
				: 0.9;
	if (at.util)
		c.utilisation = *at.util;
	const std::string seed = option_text(o.sub, "--seed");
	if (!seed.empty())
		c.seed = std::strtoull(seed.c_str(), nullptr, 10);
	const std::string writes = option_text(o.sub, "--writes");
	if (!writes.empty())
		c.measure_writes = std::strtod(writes.c_str(), nullptr);
	KVFDP_TRY(DiskTierWorkload::validate(c, cfg.logical_bytes));
	return std::unique_ptr<sim::Workload>(std::make_unique<DiskTierWorkload>(c));
}

}  // namespace

sim::WorkloadFactory disk_tier_factory()
{
	auto st = std::make_shared<EngineOptions>();
	sim::WorkloadFactory f;
	f.names = {"kvbm", "trtllm"};
	f.add_options = [st](CLI::App &sub) { add_options(sub, *st); };
	f.make = [st](const std::string &name, const model::ModelConfig &cfg,
		      const sim::WorkloadPoint &at) -> Result<std::unique_ptr<sim::Workload>> {
		if (name != "kvbm" && name != "trtllm")
			return std::unique_ptr<sim::Workload>();
		return make(*st, name, cfg, at);
	};
	return f;
}

}  // namespace kvfdp::workload
