// WAF from FDP statistics: delta MBMW / delta HBMW, and plain words for when the
// counters cannot give one.
#pragma once

#include <optional>
#include <string>

#include "nvme/logs.hpp"

namespace kvfdp::cli {

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
[[nodiscard]] WafReading assess_waf(const nvme::FdpStats &before, const nvme::FdpStats &after,
				    bool emulated);

} // namespace kvfdp::cli
