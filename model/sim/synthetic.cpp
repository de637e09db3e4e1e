// Uniform and hot/cold synthetic workloads.
#include "model/sim/synthetic.hpp"

#include <algorithm>
#include <cmath>

#include "bpf/tag.h"

namespace kvfdp::sim {
namespace {

uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

// Calls progress about every 2^16 operations.
class Ticker {
public:
	Ticker(Progress *p, uint64_t total) : p_(p), total_(total ? total : 1) {}
	void tick(uint64_t done)
	{
		if (p_ && (done & 0xFFFF) == 0)
			p_->update(static_cast<double>(done) / static_cast<double>(total_));
	}
	void finish()
	{
		if (p_)
			p_->update(1.0);
	}

private:
	Progress *p_;
	uint64_t total_;
};

Result<uint64_t> write_lbas(uint32_t write_bytes, uint32_t lba_size)
{
	if (lba_size == 0 || write_bytes < lba_size || write_bytes % lba_size)
		return guidance_error(std::errc::invalid_argument,
				      "write size must be a multiple of the LBA size");
	return uint64_t{write_bytes / lba_size};
}

// A workload's write size in LBAs, and how many such units util leaves of the capacity.
struct WriteShape {
	uint64_t nlb = 0;
	uint64_t units = 0;
};

Result<WriteShape> write_shape(uint32_t write_bytes, double util, uint64_t logical_lbas,
			       uint32_t lba_size)
{
	auto w = write_lbas(write_bytes, lba_size);
	if (!w)
		return std::move(w).error();
	if (!(util > 0 && util <= 1))
		return guidance_error(std::errc::invalid_argument, "util must be in (0, 1]");
	return WriteShape{*w, static_cast<uint64_t>(
				      std::floor(util * static_cast<double>(logical_lbas / *w)))};
}

}  // namespace

Rng::Rng(uint64_t seed)
{
	for (uint64_t &s : s_) {
		seed += 0x9E3779B97F4A7C15ull;
		uint64_t z = seed;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		s = z ^ (z >> 31);
	}
}

uint64_t Rng::next()
{
	const uint64_t r = rotl(s_[1] * 5, 7) * 9;
	const uint64_t t = s_[1] << 17;
	s_[2] ^= s_[0];
	s_[3] ^= s_[1];
	s_[1] ^= s_[2];
	s_[0] ^= s_[3];
	s_[2] ^= t;
	s_[3] = rotl(s_[3], 45);
	return r;
}

Result<void> UniformWorkload::run(Placement, uint64_t logical_lbas, uint32_t lba_size,
				  BlockSink &sink, Progress *progress)
{
	auto shape = write_shape(o_.write_bytes, o_.util, logical_lbas, lba_size);
	if (!shape)
		return std::move(shape).error();
	const uint64_t nlb = shape->nlb;
	units_ = shape->units;
	if (units_ == 0)
		return guidance_error(std::errc::invalid_argument, "util leaves nothing to write");
	const auto warm = static_cast<uint64_t>(o_.warmup_writes * static_cast<double>(units_));
	const auto meas = static_cast<uint64_t>(o_.measure_writes * static_cast<double>(units_));
	const uint64_t total = units_ + warm + meas;
	Ticker ticker(progress, total);
	uint64_t done = 0;
	for (uint64_t u = 0; u < units_; u++, done++) {
		sink.write(u * nlb, nlb, KVFDP_CLASS_NOT_SET, 0);
		ticker.tick(done);
	}
	Rng rng(o_.seed);
	for (uint64_t i = 0; i < warm + meas; i++, done++) {
		if (i == warm)
			sink.begin_measurement();
		sink.write(rng.below(units_) * nlb, nlb, KVFDP_CLASS_NOT_SET, 0);
		ticker.tick(done);
	}
	if (meas == 0)
		sink.begin_measurement();
	ticker.finish();
	return ok();
}

nlohmann::json UniformWorkload::extra() const
{
	return {{"used_units", units_}, {"measured_device_writes", o_.measure_writes}};
}

Result<void> HotColdWorkload::run(Placement placement, uint64_t logical_lbas, uint32_t lba_size,
				  BlockSink &sink, Progress *progress)
{
	auto shape = write_shape(o_.write_bytes, o_.util, logical_lbas, lba_size);
	if (!shape)
		return std::move(shape).error();
	const uint64_t nlb = shape->nlb;
	if (!(o_.hot_fraction > 0 && o_.hot_fraction < 1) ||
	    !(o_.hot_writes > 0 && o_.hot_writes < 1))
		return guidance_error(std::errc::invalid_argument,
				      "hot fraction and hot write share must be in (0, 1)");
	const uint64_t used = shape->units;
	hot_units_ =
		static_cast<uint64_t>(std::llround(o_.hot_fraction * static_cast<double>(used)));
	cold_units_ = used - hot_units_;
	if (hot_units_ == 0 || cold_units_ == 0)
		return guidance_error(std::errc::invalid_argument,
				      "capacity too small for two regions");
	const uint8_t hot_cls =
		placement == Placement::none ? KVFDP_CLASS_NOT_SET : KVFDP_CLASS_SHORT;
	const uint8_t cold_cls =
		placement == Placement::none ? KVFDP_CLASS_NOT_SET : KVFDP_CLASS_LONG;
	const double cold_life = static_cast<double>(cold_units_) / (1.0 - o_.hot_writes);
	const double period = std::max(cold_life, static_cast<double>(used));
	const auto warm = static_cast<uint64_t>(o_.warmup_lifetimes * period);
	const auto meas = static_cast<uint64_t>(o_.measure_lifetimes * period);
	Ticker ticker(progress, used + warm + meas);
	uint64_t done = 0;

	// First pass: both regions interleaved in proportion to their sizes.
	uint64_t hot_next = 0, cold_next = 0;
	for (uint64_t i = 0; i < used; i++, done++) {
		const bool hot = (i + 1) * hot_units_ / used > hot_next;
		if (hot)
			sink.write(hot_next++ * nlb, nlb, hot_cls, 0);
		else
			sink.write((hot_units_ + cold_next++) * nlb, nlb, cold_cls, 0);
		ticker.tick(done);
	}
	hot_next %= hot_units_;
	cold_next %= cold_units_;
	Rng rng(o_.seed);
	for (uint64_t i = 0; i < warm + meas; i++, done++) {
		if (i == warm)
			sink.begin_measurement();
		if (rng.unit() < o_.hot_writes) {
			sink.write(hot_next * nlb, nlb, hot_cls, 0);
			hot_next = hot_next + 1 == hot_units_ ? 0 : hot_next + 1;
		} else {
			sink.write((hot_units_ + cold_next) * nlb, nlb, cold_cls, 0);
			cold_next = cold_next + 1 == cold_units_ ? 0 : cold_next + 1;
		}
		ticker.tick(done);
	}
	ticker.finish();
	return ok();
}

nlohmann::json HotColdWorkload::extra() const
{
	return {{"hot_units", hot_units_},
		{"cold_units", cold_units_},
		{"hot_writes", o_.hot_writes}};
}

}  // namespace kvfdp::sim
