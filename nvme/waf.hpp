// WAF from FDP statistics: delta MBMW / delta HBMW, plain words for when the counters cannot
// give one, and whether a controller is QEMU's emulation (which never erases). Shared by the
// kvfdp CLI (`stats`, `metrics`) and kvfdpd's /metrics.
#pragma once

#include <optional>
#include <string>

#include "nvme/logs.hpp"

namespace kvfdp::nvme {

// What a pair of FDP statistics readings says about write amplification.
struct WafReading {
	std::optional<double> waf;  // set only when the counters support a WAF
	std::string reason;         // why waf is absent, or a caveat when present ("" = none)
};

// One line defining WAF, printed under the human stats output.
inline constexpr const char *kWafMeaning =
	"WAF (write amplification factor) = media bytes written / host bytes written "
	"(MBMW / HBMW): 1.0 means no extra writes; above 1 the drive's garbage collection "
	"copied live data.";

// Assesses the deltas after - before (pass a zero `before` for the lifetime reading).
// emulated: the controller is QEMU's FDP emulation, which never erases.
[[nodiscard]] WafReading assess_waf(const FdpStats &before, const FdpStats &after, bool emulated);

// Whether an NVMe generic device belongs to an emulated (QEMU) controller, from
// /sys/class/nvme-generic/NAME/device/model below root; false when unknown.
[[nodiscard]] bool controller_is_emulated(const std::string &device_path,
					  const std::string &root = "/");

}  // namespace kvfdp::nvme
