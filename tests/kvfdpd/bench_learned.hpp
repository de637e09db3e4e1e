// kvfdpd's learned placement (kvfdpd/daemon/learned.hpp) for the engine rig: a device that
// only answers info() and RUH Update, so the bench and the allocation test can run the
// engine with --placement learned without a model data file. A mock: LearnedPlacement reads
// the geometry from the device and sends it RUH Update off the data path; nothing else.
#pragma once

#include <cerrno>
#include <memory>

#include "nvme/device.hpp"
#include "tests/kvfdpd/bench_rig.hpp"
#include "kvfdpd/daemon/learned.hpp"

namespace kvfdp::test {

class GeometryDevice final : public nvme::Device {
public:
	explicit GeometryDevice(const RigConfig &rc)
	{
		info_.backend = "model";
		info_.lba_size = rc.lba_size;
		info_.nlb = rc.nlb;
		info_.nruh = rc.nruh;
		info_.ru_size = 16u << 20;
		info_.max_transfer = rc.max_transfer;
	}
	const nvme::DeviceInfo &info() const override { return info_; }
	Result<std::vector<nvme::Handle>> handles() override
	{
		return errno_error(ENOTSUP, "geometry device");
	}
	Result<std::vector<uint8_t>> log_page(uint8_t, uint8_t) override
	{
		return errno_error(ENOTSUP, "geometry device");
	}
	Result<std::unique_ptr<nvme::IoQueue>> open_queue(io_uring &) override
	{
		return errno_error(ENOTSUP, "geometry device");
	}
	Result<void> ruh_update(std::span<const uint16_t>) override { return {}; }

private:
	nvme::DeviceInfo info_;
};

// The learned placement a rig's engine uses (RigConfig::learned), on rc's geometry; no state
// file, no regroup thread (call recompute_now() between serves, off the counted path).
struct RigLearned {
	explicit RigLearned(const RigConfig &rc)
	    : dev(rc), lp(daemon::LearnedPlacement::create(dev, rc.nruh, daemon::LearnedOptions{}))
	{
	}
	GeometryDevice dev;
	std::unique_ptr<daemon::LearnedPlacement> lp;
};

}  // namespace kvfdp::test
