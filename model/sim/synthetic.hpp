// Synthetic workloads of `kvfdp simulate`: uniform random overwrites, and hot/cold streams.
#pragma once

#include <cstdint>

#include "model/sim/workload.hpp"

namespace kvfdp::sim {

// Phases are measured in device writes: one device write = every used unit written once.
struct UniformOptions {
	double util = 1.0;  // fraction of the logical capacity written (the rest stays trimmed)
	double warmup_writes = 3.0;  // random device writes after the sequential fill, not measured
	double measure_writes = 3.0;  // random device writes measured
	uint32_t write_bytes = 4096;  // size of each write (use the model's mapping unit)
	uint64_t seed = 1;
};

// Fills the used space sequentially, then overwrites uniformly random units. Single stream:
// it supports placement none only.
class UniformWorkload final : public Workload {
public:
	explicit UniformWorkload(const UniformOptions &o) : o_(o) {}
	[[nodiscard]] std::string name() const override { return "uniform"; }
	[[nodiscard]] std::vector<Placement> placements() const override
	{
		return {Placement::none};
	}
	[[nodiscard]] Result<void> run(Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, BlockSink &sink,
				       Progress *progress) override;
	[[nodiscard]] nlohmann::json extra() const override;

private:
	UniformOptions o_;
	uint64_t units_ = 0;
};

struct HotColdOptions {
	double util = 1.0;          // fraction of the logical capacity written
	double hot_fraction = 0.1;  // share of the used space that is hot
	double hot_writes = 0.5;    // share of the writes that go to the hot data (9x shorter life)
	// Warm-up and measurement, in multiples of the cold data's lifetime (or of one device
	// write, whichever is longer).
	double warmup_lifetimes = 2.0;
	double measure_lifetimes = 3.0;
	uint32_t write_bytes = 4096;
	uint64_t seed = 1;
};

// Two streams that each overwrite their region in order, so data dies in the order it was
// written (like a FIFO cache): hot data after hot_size / hot rate, cold data much later.
// The first pass writes both regions interleaved (mixing them in the same RUs without
// placement). With placement hint, hot writes are SHORT and cold writes LONG.
class HotColdWorkload final : public Workload {
public:
	explicit HotColdWorkload(const HotColdOptions &o) : o_(o) {}
	[[nodiscard]] std::string name() const override { return "hotcold"; }
	[[nodiscard]] Result<void> run(Placement placement, uint64_t logical_lbas,
				       uint32_t lba_size, BlockSink &sink,
				       Progress *progress) override;
	[[nodiscard]] nlohmann::json extra() const override;
	// Its hint is the hot or cold side; it has no oracle pre-pass.
	[[nodiscard]] std::vector<Placement> placements() const override
	{
		return {Placement::none, Placement::hint};
	}

private:
	HotColdOptions o_;
	uint64_t hot_units_ = 0, cold_units_ = 0;
};

// xoshiro256** seeded by splitmix64: fast, reproducible, no allocation.
class Rng {
public:
	explicit Rng(uint64_t seed);
	uint64_t next();
	// Uniform in [0, n), n >= 1 (multiply-shift; bias below 2^-64 n).
	uint64_t below(uint64_t n)
	{
		return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
	}
	// Uniform in [0, 1).
	double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
	uint64_t s_[4];
};

}  // namespace kvfdp::sim
