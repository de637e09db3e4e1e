// Opening the device behind kvfdpd by backend name: passthru (/dev/ngXnY), streams
// (/dev/nvmeXnY through block write streams, Linux 6.16+), model (the FDP
// SSD model over a sparse data file) or file (a plain file, no placement); several of one
// backend striped into one device (nvme/stripe.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "nvme/device.hpp"

namespace kvfdp::daemon {

struct BackendOptions {
	std::string kind = "passthru";  // a proto::BackendKind name (proto/backend_kind.hpp)
	std::string device;             // passthru: /dev/ngXnY; streams: /dev/nvmeXnY
	std::string file;               // file: backing file; model: data file
	// A stripe: every member's path in order (--device or, for model/file, --file given more
	// than once, or the config's [device] paths), two or more; empty: the one device/file.
	std::vector<std::string> members;
	uint64_t stripe_bytes = 0;      // --stripe-size; 0: nvme::default_stripe_bytes
	uint64_t size = 0;              // file / model: capacity in bytes (0: the file's size)
	uint32_t lba_size = 4096;       // file / model
	uint64_t ru_size = 1ull << 20;  // model: reclaim unit bytes
	uint16_t nruh = 8;              // model: handles
	double op = 0.28;               // model: over-provisioning
};

// One device, or with members a StripeDevice over one device per member (each opened as
// the single device would be, every refusal naming its member).
[[nodiscard]] Result<std::unique_ptr<nvme::Device>> open_backend(const BackendOptions &opts);

// The placement handles the backend will have when its options alone decide it (model:
// --nruh; file: none, 0), so a config can be checked before open_backend creates the model's
// or the file's data file; passthru and streams: nullopt (the namespace says, once opened).
[[nodiscard]] std::optional<uint16_t> handles_before_open(const BackendOptions &opts);

}  // namespace kvfdp::daemon
