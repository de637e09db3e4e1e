// WAF from FDP statistics: delta MBMW / delta HBMW, and plain words for when the counters
// cannot give one. Shared by the kvfdp CLI (`stats`, `metrics`) and kvfdpd's /metrics
// (proto/metrics.cpp); whether a controller is QEMU's emulation is nvme/emulated.hpp.
#pragma once

#include <optional>
#include <string>

#include "nvme/fdp_stats.hpp"

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
[[nodiscard]] inline WafReading assess_waf(const FdpStats &before, const FdpStats &after,
					   bool emulated)
{
	WafReading r;
	if (after.hbmw < before.hbmw || after.mbmw < before.mbmw || after.mbe < before.mbe) {
		r.reason = "the counters went backwards between the readings (drive reset or "
			   "formatted?); take a new pair of readings";
		return r;
	}
	u128 host = after.hbmw - before.hbmw;
	u128 media = after.mbmw - before.mbmw;
	u128 erased = after.mbe - before.mbe;
	if (host == 0) {
		r.reason = "no host writes yet (HBMW unchanged): WAF needs data written; write "
			   "something, or use `stats --interval S` while a workload runs";
		return r;
	}
	if (emulated && after.mbe == 0) {
		r.reason = "emulated drive (QEMU): it performs no garbage collection and reports "
			   "no media erase (MBE 0), so MBMW/HBMW is not a WAF; `kvfdp simulate` or "
			   "--backend model projects the WAF placement would give";
		return r;
	}
	r.waf = to_double(media) / to_double(host);
	if (erased == 0)
		r.reason = "no media erase in this period (MBE unchanged): no garbage collection "
			   "has run, so the WAF is at its floor";
	return r;
}

}  // namespace kvfdp::nvme
