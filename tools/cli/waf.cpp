// WAF assessment from FDP statistics deltas.
#include "tools/cli/waf.hpp"

namespace kvfdp::cli {

WafReading assess_waf(const nvme::FdpStats &before, const nvme::FdpStats &after, bool emulated)
{
	WafReading r;
	if (after.hbmw < before.hbmw || after.mbmw < before.mbmw || after.mbe < before.mbe) {
		r.reason = "the counters went backwards between the readings (drive reset or "
			   "formatted?); take a new pair of readings";
		return r;
	}
	nvme::u128 host = after.hbmw - before.hbmw;
	nvme::u128 media = after.mbmw - before.mbmw;
	nvme::u128 erased = after.mbe - before.mbe;
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
	r.waf = nvme::to_double(media) / nvme::to_double(host);
	if (erased == 0)
		r.reason = "no media erase in this period (MBE unchanged): no garbage collection "
			   "has run, so the WAF is at its floor";
	return r;
}

} // namespace kvfdp::cli
