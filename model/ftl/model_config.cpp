// Validation and names for ModelConfig.
#include "model/ftl/model_config.hpp"

#include <cmath>
#include <cstdio>

namespace kvfdp::model {
namespace {

Error bad(const char *fmt, unsigned long long a = 0, unsigned long long b = 0)
{
	char buf[256];
	// fmt is a literal at every call site, with only %llu conversions.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	std::snprintf(buf, sizeof buf, fmt, a, b);
#pragma GCC diagnostic pop
	return guidance_error(std::errc::invalid_argument, buf);
}

bool pow2(uint64_t v)
{
	return v && (v & (v - 1)) == 0;
}

}  // namespace

Result<void> validate(const ModelConfig &c)
{
	if (c.lba_size < 512 || !pow2(c.lba_size))
		return bad("lba size %llu: use a power of two >= 512", c.lba_size);
	if (c.mapping_unit < c.lba_size || c.mapping_unit % c.lba_size)
		return bad("mapping unit %llu: use a multiple of the LBA size (%llu)",
			   c.mapping_unit, c.lba_size);
	if (c.ru_size < c.mapping_unit || c.ru_size % c.mapping_unit)
		return bad("RU size %llu: use a multiple of the mapping unit (%llu)", c.ru_size,
			   c.mapping_unit);
	if (c.ru_size / c.mapping_unit > (1u << 24))
		return bad("RU size %llu: at most 2^24 mapping units per RU (unit %llu)", c.ru_size,
			   c.mapping_unit);
	if (c.logical_bytes < c.ru_size || c.logical_bytes % c.mapping_unit)
		return bad(
			"capacity %llu: use a multiple of the mapping unit (%llu), at least one RU",
			c.logical_bytes, c.mapping_unit);
	if (c.nrg == 0 || c.nruh == 0)
		return bad("need at least one reclaim group and one handle (nrg %llu, nruh %llu)",
			   c.nrg, c.nruh);
	if (uint32_t{c.nrg} * c.nruh > 0xFFFF || c.nruh > 0xFFFE)
		return bad("too many handles: nrg %llu x nruh %llu exceeds 65535", c.nrg, c.nruh);
	if (!c.ruh_types.empty() && c.ruh_types.size() != c.nruh)
		return bad("ruh_types has %llu entries; give none or one per handle (%llu)",
			   c.ruh_types.size(), c.nruh);
	if (!(c.op > 0) || !(c.op <= 10) || !std::isfinite(c.op))
		return guidance_error(std::errc::invalid_argument,
				      "over-provisioning must be in (0, 10], e.g. 0.28");
	const uint32_t low = c.gc_low ? c.gc_low : 2;
	const uint32_t high = c.gc_high ? c.gc_high : low + 1;
	if (low < 2 || high <= low)
		return bad("GC thresholds low %llu high %llu: need 2 <= low < high", low, high);

	const long double physical = static_cast<long double>(c.logical_bytes) * (1.0L + c.op);
	const uint64_t total_rus = static_cast<uint64_t>(physical / c.ru_size);
	const uint64_t units = c.logical_bytes / c.mapping_unit;
	const uint64_t upr = c.ru_size / c.mapping_unit;
	if (total_rus * upr >= 0xFFFFFFFFull || units >= 0xFFFFFFFFull)
		return bad(
			"capacity too large for 32-bit mapping: %llu physical units; use a larger "
			"mapping unit",
			total_rus * upr);
	const uint64_t per_rg = total_rus / c.nrg;
	const uint64_t logical_rus = (units + upr - 1) / upr;
	uint64_t persistent = 0;
	for (HandleType t : c.ruh_types)
		persistent += t == HandleType::persistently_isolated;
	// What one group needs to run at all (docs/model.md "Geometry"): its share of the data,
	// one host RU open, the shared GC stream's RU and one per persistently isolated handle,
	// and the free RUs GC keeps (gc_low - 1) to relocate into. Further handles open RUs
	// from the spare only when written: a workload that leaves GC no reclaimable space
	// fails at run time (ENOSPC), as a drive would stall.
	const uint64_t need = (logical_rus + c.nrg - 1) / c.nrg + 1 + 1 + persistent + (low - 1);
	if (per_rg < need) {
		// The smallest OP with need RUs in every group, rounded up to 0.001.
		const long double min_op =
			static_cast<long double>(need) * c.nrg * c.ru_size / c.logical_bytes - 1.0L;
		char buf[320];
		std::snprintf(
			buf, sizeof buf,
			"over-provisioning too small for this geometry: %llu RUs per group, need %llu; "
			"the smallest OP that runs is %.3f; raise op or capacity, or use smaller RUs",
			static_cast<unsigned long long>(per_rg),
			static_cast<unsigned long long>(need),
			static_cast<double>(std::ceil(min_op * 1000.0L) / 1000.0L) + 0.0);
		return guidance_error(std::errc::invalid_argument, buf);
	}
	return ok();
}

const char *gc_policy_name(GcPolicy p)
{
	return p == GcPolicy::greedy ? "greedy" : "cost-benefit";
}

Result<GcPolicy> parse_gc_policy(const std::string &s)
{
	if (s == "greedy")
		return GcPolicy::greedy;
	if (s == "cost-benefit" || s == "cost_benefit")
		return GcPolicy::cost_benefit;
	return guidance_error(std::errc::invalid_argument,
			      "gc policy '" + s + "': use greedy or cost-benefit");
}

}  // namespace kvfdp::model
