// The CLI's RUH view as the shared metric families' input.
#include "cli/ruh_metrics.hpp"

namespace kvfdp::cli {

std::vector<proto::MetricFamily> ruh_metrics(const RuhView &v)
{
	std::vector<nvme::Handle> hs;
	for (const auto &r : v.rows) {
		nvme::Handle h;
		h.index = r.index;
		h.pid = r.pid;
		h.ruhid = r.ruhid;
		h.earutr = r.earutr;
		h.ruamw = r.ruamw;
		hs.push_back(h);
	}
	return proto::ruh_families(hs, v.lba_size);
}

}  // namespace kvfdp::cli
