// Placement policy: default map and validation against the device's handles.
#include "userspace/daemon/policy.hpp"

#include <ctime>

namespace kvfdp::daemon {

std::array<uint16_t, kNumClasses> default_map(uint16_t nruh)
{
	std::array<uint16_t, kNumClasses> m{};
	if (nruh <= 1)
		return m;  // one handle (or none): everything on the default
	// Levels 1..4 are SHORT..EXTREME; spread them over handles 1..nruh-1, neighbours sharing.
	const unsigned spare = nruh - 1u;
	for (unsigned cls = KVFDP_CLASS_SHORT; cls <= KVFDP_CLASS_EXTREME; cls++) {
		const unsigned level = cls - KVFDP_CLASS_SHORT;  // 0..3
		m[cls] = static_cast<uint16_t>(spare >= 4 ? 1 + level : 1 + level * spare / 4);
	}
	return m;
}

namespace {

std::string where(const PolicyConfig &cfg, int line)
{
	std::string s = cfg.source.empty() ? "built-in policy" : cfg.source;
	if (line > 0)
		s += ":" + std::to_string(line);
	return s;
}

} // namespace

Result<Policy> make_policy(const PolicyConfig &cfg, uint16_t nruh)
{
	if (nruh > kMaxHandles)
		return plain_error("device has " + std::to_string(nruh) + " placement handles; kvfdpd supports at most " +
					  std::to_string(kMaxHandles));
	Policy p;
	p.config = cfg;
	p.nruh = nruh;
	p.handle = default_map(nruh);
	for (unsigned c = 0; c < kNumClasses; c++) {
		if (!cfg.handle[c])
			continue;
		const uint16_t h = *cfg.handle[c];
		const uint16_t limit = nruh == 0 ? 1 : nruh;
		if (h >= limit)
			return plain_error(where(cfg, cfg.line[c]) + ": placement." + class_name(c) + ": handle " +
						  std::to_string(h) + " out of range (device has " +
						  std::to_string(nruh) + " handles: use 0.." +
						  std::to_string(limit - 1) + ")");
		p.handle[c] = h;
	}
	for (size_t i = 0; i < cfg.rules.size(); i++) {
		const DirRule &r = cfg.rules[i];
		if (r.path.empty() || r.path[0] != '/')
			return plain_error(where(cfg, r.line) + ": rule[" + std::to_string(i) +
						  "].path: must be an absolute directory path");
	}
	p.loaded_at = static_cast<int64_t>(std::time(nullptr));
	return p;
}

} // namespace kvfdp::daemon
