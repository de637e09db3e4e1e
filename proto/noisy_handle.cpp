// The noisy-handle rule and its line.
#include "proto/noisy_handle.hpp"

#include <cstdio>

namespace kvfdp::proto {

std::optional<NoisyHandle> find_noisy_handle(const std::vector<TwinHandle> &handles)
{
	uint64_t host = 0, relocated = 0;
	unsigned written = 0;
	const TwinHandle *top = nullptr;
	uint64_t next = 0;  // the second largest relocated bytes
	for (const TwinHandle &h : handles) {
		host += h.host_bytes;
		relocated += h.relocated_bytes;
		written += h.host_bytes > 0;
		if (!top || h.relocated_bytes > top->relocated_bytes) {
			next = top ? top->relocated_bytes : 0;
			top = &h;
		} else if (h.relocated_bytes > next) {
			next = h.relocated_bytes;
		}
	}
	const auto r = static_cast<double>(relocated);
	if (!top || written < 2 || !host ||
	    r < kNoisyMinRelocatedPerHost * static_cast<double>(host))
		return std::nullopt;
	const auto t = static_cast<double>(top->relocated_bytes);
	if (t <= kNoisyMinShare * r || t < kNoisyMinLead * static_cast<double>(next))
		return std::nullopt;
	return NoisyHandle{top->handle, t / r,
			   static_cast<double>(top->host_bytes) / static_cast<double>(host)};
}

std::optional<NoisyHandle> find_noisy_handle(const std::optional<std::vector<TwinHandle>> &drive,
					     const std::vector<TwinHandle> &twin)
{
	if (drive)
		if (auto n = find_noisy_handle(*drive)) {
			n->drive = true;
			return n;
		}
	return find_noisy_handle(twin);
}

std::string noisy_handle_line(const NoisyHandle &n)
{
	char line[320];
	std::snprintf(
		line, sizeof line,
		"handle %u takes %.0f%% of the %s GC relocations (%.0f%% of host writes): its data dies out "
		"of write order and GC's copies of it raise every handle's WAF; give its writers/classes "
		"placements of their own, or the drive more free space (docs/twin.md, Noisy handles)",
		n.handle, 100 * n.relocated_share, n.drive ? "drive's (FDP events log)" : "twin's",
		100 * n.host_share);
	return line;
}

nlohmann::json noisy_handle_json(const NoisyHandle &n)
{
	return {{"handle", n.handle},
		{"relocated_share", n.relocated_share},
		{"host_share", n.host_share},
		{"source", n.drive ? "drive" : "twin"},
		{"warning", noisy_handle_line(n)}};
}

}  // namespace kvfdp::proto
