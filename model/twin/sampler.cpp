// RegionSampler's permutation and the twin's memory plan.
#include "model/twin/sampler.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <string>

#include "model/ftl/ftl.hpp"

namespace kvfdp::twin {

namespace {

// Odd multipliers and offsets of the three mixing rounds (any odd multiplier is invertible
// mod 2^k).
constexpr uint64_t kMul[3] = {0x9E3779B97F4A7C15ull, 0xBF58476D1CE4E5B9ull, 0x94D049BB133111EBull};
constexpr uint64_t kAdd[3] = {0x2545F4914F6CDD1Dull, 0x632BE59BD9B4E019ull, 0x0ull};

// The inverse of odd m mod 2^64 (Newton: each step doubles the correct low bits).
constexpr uint64_t inverse_of(uint64_t m)
{
	uint64_t x = m;
	for (int i = 0; i < 6; i++)
		x *= 2 - m * x;
	return x;
}

// "4.0 KiB", "0.1 MiB", "64.0 MiB": a bound as the refusal names it.
std::string mib(uint64_t bytes)
{
	char buf[48];
	if (bytes < (1u << 20))
		std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
	else
		std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
	return buf;
}

}  // namespace

RegionSampler::RegionSampler(uint64_t regions, uint64_t kept)
    : regions_(regions), kept_(std::min(kept, regions)), identity_(kept >= regions)
{
	mask_ = regions_ > 1 ? std::bit_ceil(regions_) - 1 : 0;
	shift_ = std::max(1, std::popcount(mask_) / 2);
}

uint64_t RegionSampler::round(uint64_t x) const
{
	for (int i = 0; i < 3; i++) {
		x = (x * kMul[i] + kAdd[i]) & mask_;
		x ^= x >> shift_;
	}
	return x;
}

uint64_t RegionSampler::unround(uint64_t x) const
{
	for (int i = 2; i >= 0; i--) {
		uint64_t y = x;  // undo x ^= x >> shift: iterate until every bit is restored
		for (int b = 0; b < 64; b += static_cast<int>(shift_))
			y = x ^ (y >> shift_);
		x = ((y - kAdd[i]) * inverse_of(kMul[i])) & mask_;
	}
	return x;
}

uint64_t RegionSampler::region_of(uint64_t s) const
{
	if (identity_)
		return s;
	uint64_t x = unround(s);
	while (x >= regions_)
		x = unround(x);
	return x;
}

namespace {

// The sampled model at k mapping units per RU (k == ru_units: the whole drive).
model::ModelConfig sampled_config(const TwinGeometry &g, const TwinPlan &p, uint32_t k,
				  uint64_t &kept)
{
	model::ModelConfig c;
	c.lba_size = g.lba_size;
	c.mapping_unit = static_cast<uint32_t>(p.model.mapping_unit);
	c.nrg = 1;
	c.nruh = std::max<uint16_t>(1, g.nruh);
	c.op = g.op;
	c.gc = g.gc;
	const uint64_t mu = c.mapping_unit;
	const uint64_t region_bytes = p.region_lbas * g.lba_size;
	if (k == p.ru_units) {
		kept = p.regions;
		c.logical_bytes = g.nlb * g.lba_size / mu * mu;
		c.ru_size = g.ru_size;
		return c;
	}
	const double rate = static_cast<double>(k) / p.ru_units;
	kept = std::max<uint64_t>(
		1, static_cast<uint64_t>(std::llround(static_cast<double>(p.regions) * rate)));
	c.logical_bytes = kept * region_bytes;
	c.ru_size = uint64_t{k} * mu;
	return c;
}

}  // namespace

namespace {

// The geometry checks and the sampling granularity, before any rate is chosen; `bound` names
// the memory bound in the refusals (the option or the config key that set it).
Result<TwinPlan> base_plan(const TwinGeometry &g, std::string_view bound)
{
	const uint32_t mu = std::max<uint32_t>(4096, g.lba_size);
	if (g.ru_size == 0 || g.nlb == 0 || g.lba_size == 0)
		return guidance_error(
			std::errc::invalid_argument,
			"twin: the device reports no reclaim unit size or capacity; run with " +
				std::string(bound) + " 0");
	if (g.ru_size % mu)
		return guidance_error(std::errc::invalid_argument,
				      "twin: the RU size " + std::to_string(g.ru_size) +
					      " is not a multiple of " + std::to_string(mu) +
					      " bytes; run with " + std::string(bound) + " 0");
	TwinPlan p;
	p.model.mapping_unit = mu;
	p.ru_units = static_cast<uint32_t>(std::min<uint64_t>(g.ru_size / mu, UINT32_MAX));
	p.region_lbas = mu / g.lba_size;
	p.regions = (g.nlb + p.region_lbas - 1) / p.region_lbas;
	return p;
}

// p at k units per sampled RU, when the model accepts it.
Result<void> finish_plan(const TwinGeometry &g, TwinPlan &p, uint32_t k)
{
	uint64_t kept = 0;
	model::ModelConfig c = sampled_config(g, p, k, kept);
	KVFDP_TRY(model::validate(c));
	p.model = std::move(c);
	p.kept = kept;
	p.sampled_ru_units = k;
	p.rate = static_cast<double>(k) / p.ru_units;
	p.memory_bytes = 2 * model::Ftl::memory_for(p.model);
	return ok();
}

}  // namespace

Result<TwinPlan> plan_twin_at(const TwinGeometry &g, uint32_t sampled_ru_units)
{
	auto p = base_plan(g, kMemoryOption);
	if (!p)
		return p;
	if (sampled_ru_units == 0 || sampled_ru_units > p->ru_units)
		return guidance_error(std::errc::invalid_argument,
				      "twin: " + std::to_string(sampled_ru_units) +
					      " units per sampled RU: use 1.." +
					      std::to_string(p->ru_units));
	if (auto r = finish_plan(g, *p, sampled_ru_units); !r)
		return guidance_error(std::errc::invalid_argument, "twin: " + r.error().message());
	return p;
}

Result<TwinPlan> plan_twin(const TwinGeometry &g, uint64_t memory_bytes, std::string_view bound)
{
	auto base = base_plan(g, bound);
	if (!base)
		return base;
	TwinPlan &p = *base;
	const uint32_t mu = static_cast<uint32_t>(p.model.mapping_unit);
	auto memory_at = [&](uint32_t k) {
		uint64_t kept = 0;
		return 2 * model::Ftl::memory_for(sampled_config(g, p, k, kept));
	};
	// The recent window takes its share first; the models get the rest.
	p.window_records = window_records_for(memory_bytes);
	const uint64_t models_bound = memory_bytes - p.window_records * kWindowRecordBytes;
	if (memory_at(1) > models_bound) {
		uint64_t kept = 0;
		const model::ModelConfig c = sampled_config(g, p, 1, kept);
		const uint64_t rus = static_cast<uint64_t>(
			static_cast<long double>(c.logical_bytes) * (1.0L + c.op) / c.ru_size);
		// The smallest bound whose models' part holds memory_at(1).
		const uint64_t need =
			(memory_at(1) * kWindowShare + kWindowShare - 2) / (kWindowShare - 1);
		return guidance_error(
			std::errc::invalid_argument,
			"twin: a memory bound of " + mib(memory_bytes) +
				" is too small for one reclaim unit: the smallest sampled model of this drive (" +
				std::to_string(rus) + " RUs of one " + std::to_string(mu) +
				"-byte mapping unit, two copies) and its recent window need " +
				mib(need) + "; raise " + std::string(bound) +
				" to at least that, or 0 to run without the twin");
	}
	// The largest k that fits (memory grows with k), then down to one the model accepts.
	uint32_t lo = 1, hi = p.ru_units;
	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo + 1) / 2;
		if (memory_at(mid) <= models_bound)
			lo = mid;
		else
			hi = mid - 1;
	}
	std::string last;
	for (uint32_t k = lo; k >= 1 && k + 64 > lo; k--) {
		auto r = finish_plan(g, p, k);
		if (r)
			return p;
		last = r.error().message();
	}
	return guidance_error(std::errc::invalid_argument,
			      "twin: the sampled model of this drive is refused (" + last +
				      "); set --twin-op, or " + std::string(bound) +
				      " 0 to run without the twin");
}

}  // namespace kvfdp::twin
