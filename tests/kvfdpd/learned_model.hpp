// The FDP SSD model device the learned-placement tests run kvfdpd's learner on: 1 MiB reclaim
// units, 4 handles, 25% OP, 4 KiB LBAs, its data in a file at data.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "nvme/device.hpp"
#include "model/ftl/model_device.hpp"

namespace kvfdp::test {

inline std::unique_ptr<nvme::Device> learned_model(const std::string &data, uint64_t logical_bytes)
{
	model::ModelDeviceOptions o;
	o.config.logical_bytes = logical_bytes;
	o.config.lba_size = 4096;
	o.config.ru_size = uint64_t{1} << 20;
	o.config.nruh = 4;
	o.config.op = 0.25;
	o.data_path = data;
	auto d = model::open_model_device(o);
	REQUIRE(d.ok());
	return std::move(d).value();
}

}  // namespace kvfdp::test
