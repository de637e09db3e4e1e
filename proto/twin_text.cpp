// `kvfdp stats`'s lines for the live twin (docs/twin.md): the stats reply's twin object as text.
#include "proto/twin_text.hpp"

#include <cstdio>
#include <optional>

#include "proto/control.hpp"

namespace kvfdp::proto {

namespace {

std::string bytes_text(double b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	const bool neg = b < 0;
	if (neg)
		b = -b;
	int u = 0;
	while (b >= 1024 && u < 5) {
		b /= 1024;
		u++;
	}
	char buf[48];
	std::snprintf(buf, sizeof buf, u ? "%s%.2f %s" : "%s%.0f %s", neg ? "-" : "", b, units[u]);
	return buf;
}

std::string waf_text(const std::optional<double> &waf)
{
	if (!waf)
		return "n/a (nothing written yet)";
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.3f", *waf);
	return buf;
}

// head and the handles GC copied from or the host wrote through, with their share of the
// copies (docs/twin.md, Noisy handles); "" without per-handle figures or while GC has copied
// nothing.
std::string handles_text(const char *head, const std::vector<TwinHandle> &handles)
{
	uint64_t all = 0;
	for (const TwinHandle &h : handles)
		all += h.relocated_bytes;
	if (!all)
		return {};  // GC copied nothing: no handle to compare
	std::string list;
	for (const TwinHandle &h : handles) {
		if (!h.host_bytes && !h.relocated_bytes)
			continue;
		char item[96];
		std::snprintf(item, sizeof item, "%s%u: %s (%.0f%%)", list.empty() ? "" : ", ",
			      h.handle, bytes_text(static_cast<double>(h.relocated_bytes)).c_str(),
			      all ? 100.0 * static_cast<double>(h.relocated_bytes) /
					      static_cast<double>(all)
				  : 0.0);
		list += item;
	}
	if (list.empty())
		return {};
	return head + list + "\n";
}

}  // namespace

std::string twin_text(const TwinStats &t)
{
	char line[256];
	std::string out =
		"\ntwin (docs/twin.md): the FDP SSD model fed kvfdpd's writes and trims since it started\n";
	std::snprintf(line, sizeof line, "  %-22s %s\n", "waf with placement",
		      waf_text(t.placed.waf).c_str());
	out += line;
	std::snprintf(line, sizeof line, "  %-22s %s\n", "waf without (none)",
		      waf_text(t.none.waf).c_str());
	out += line;
	std::snprintf(line, sizeof line, "  %-22s %s of media writes (projected host writes %s)\n",
		      "saved by placement", bytes_text(static_cast<double>(t.saved_bytes)).c_str(),
		      bytes_text(static_cast<double>(t.host_bytes)).c_str());
	out += line;
	std::snprintf(line, sizeof line,
		      "  %-22s %.6g of the LBA space and of each RU, %s of memory\n", "sampled",
		      t.rate, bytes_text(static_cast<double>(t.memory_bytes)).c_str());
	out += line;
	std::snprintf(line, sizeof line, "  %-22s %.0f (%.0f dropped: ring full)\n", "records",
		      static_cast<double>(t.records), static_cast<double>(t.dropped));
	out += line;
	std::snprintf(line, sizeof line, "  %-22s ", "relocated by handle");
	return out + handles_text(line, t.handles);
}

std::string drive_handles_text(const std::vector<TwinHandle> &handles)
{
	return handles_text("relocated by handle, as the drive reports (FDP events log): ",
			    handles);
}

std::string twin_text(const nlohmann::json &twin)
{
	return twin_text(reply_as<TwinStats>(twin));
}

}  // namespace kvfdp::proto
