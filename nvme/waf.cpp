// WAF assessment from FDP statistics deltas; emulated-controller detection from sysfs.
#include "nvme/waf.hpp"

#include <fstream>

namespace kvfdp::nvme {

WafReading assess_waf(const FdpStats &before, const FdpStats &after, bool emulated)
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

bool controller_is_emulated(const std::string &device_path, const std::string &root)
{
	auto slash = device_path.rfind('/');
	std::string name = slash == std::string::npos ? device_path : device_path.substr(slash + 1);
	if (name.rfind("ng", 0) != 0 && name.rfind("nvme", 0) != 0)
		return false;
	std::string base = root == "/" ? "" : root;
	for (const char *cls : {"/sys/class/nvme-generic/", "/sys/class/block/"}) {
		std::ifstream in(base + cls + name + "/device/model");
		std::string model;
		if (in && std::getline(in, model))
			return model.find("QEMU") != std::string::npos;
	}
	return false;
}

}  // namespace kvfdp::nvme
