// The `model` backend of nvme::Device: the FDP SSD model with data in a sparse file.
#pragma once

#include <memory>
#include <string>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "model/ftl/model_config.hpp"

namespace kvfdp::model {

struct ModelDeviceOptions {
	// Geometry and policies: config.logical_bytes (capacity), lba_size, ru_size, nruh, nrg,
	// op, gc, ... (see config.hpp).
	ModelConfig config;
	// Sparse file that holds the data (created if missing, sized to the capacity), so reads
	// return what was written. The FTL state itself lives in memory and starts empty.
	std::string data_path;
};

// Opens a model device. Its IoQueue completes every request inline (Prep{queued=false}):
// pread/pwrite on the data file plus the model's accounting; deallocate and write zeroes
// punch a hole and trim. handles() is the model's RUH Status; log_page() returns 0x20-0x23
// in a drive's binary formats. One IoQueue at a time drives the FTL, with no lock (a second
// open_queue() is EBUSY until the first is destroyed); handles() and log_page() may run on
// any thread and read a consistent copy the queue publishes after each I/O. ruh_update()
// closes each handle's open RU (Ftl::ruh_update) at once when no queue is open, else the
// open queue does it before its next I/O.
[[nodiscard]] Result<std::unique_ptr<nvme::Device>>
open_model_device(const ModelDeviceOptions &opts);

}  // namespace kvfdp::model
