// Policy validation against the device's handles.
#include "placement/policy.hpp"

#include <ctime>

namespace kvfdp::placement {

namespace {

std::string where(const PolicyConfig &cfg, int line)
{
	std::string s = cfg.source.empty() ? "built-in policy" : cfg.source;
	if (line > 0)
		s += ":" + std::to_string(line);
	return s;
}

Error out_of_range(const PolicyConfig &cfg, int line, const std::string &key, uint16_t h,
		   uint16_t nruh)
{
	const uint16_t limit = nruh == 0 ? 1 : nruh;
	return plain_error(where(cfg, line) + ": " + key + ": handle " + std::to_string(h) +
			   " out of range (device has " + std::to_string(nruh) +
			   " handles: use 0.." + std::to_string(limit - 1) + ")");
}

}  // namespace

Result<Policy> make_policy(const PolicyConfig &cfg, uint16_t nruh)
{
	if (nruh > kMaxHandles)
		return plain_error("device has " + std::to_string(nruh) +
				   " placement handles; kvfdpd supports at most " +
				   std::to_string(kMaxHandles));
	Policy p;
	p.config = cfg;
	p.nruh = nruh;
	p.handle = default_map(nruh);
	const uint16_t limit = nruh == 0 ? 1 : nruh;
	for (unsigned c = 0; c < kNumClasses; c++) {
		if (!cfg.handle[c])
			continue;
		const uint16_t h = *cfg.handle[c];
		if (h >= limit)
			return out_of_range(cfg, cfg.line[c],
					    std::string("placement.") + class_name(c), h, nruh);
		p.handle[c] = h;
	}
	for (size_t i = 0; i < cfg.rules.size(); i++) {
		const DirRule &r = cfg.rules[i];
		if (r.path.empty() || r.path[0] != '/')
			return plain_error(where(cfg, r.line) + ": rule[" + std::to_string(i) +
					   "].path: must be an absolute directory path");
	}
	for (size_t i = 0; i < cfg.writers.size(); i++) {
		const WriterRule &w = cfg.writers[i];
		if (w.handle && *w.handle >= limit)
			return out_of_range(cfg, w.line, "writer[" + std::to_string(i) + "].handle",
					    *w.handle, nruh);
	}
	p.loaded_at = static_cast<int64_t>(std::time(nullptr));
	return p;
}

std::optional<uint16_t> fixed_handle(const WriterRule &w, const Policy &p)
{
	if (w.handle)
		return *w.handle;
	if (w.cls && *w.cls < kNumClasses)
		return p.handle[*w.cls];
	return std::nullopt;
}

}  // namespace kvfdp::placement
