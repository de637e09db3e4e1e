// The FDP events log's Media Reallocated events, counted per handle.
#include "kvfdpd/daemon/ctl/drive_relocations.hpp"

#include <utility>

#include "nvme/logs.hpp"
#include "nvme/spec.hpp"

namespace kvfdp::daemon {

DriveRelocations::DriveRelocations(std::vector<uint16_t> pids, uint32_t nsid, uint32_t lba_size)
    : pids_(std::move(pids)), nsid_(nsid), lba_size_(lba_size), bytes_(pids_.size(), 0)
{
}

Result<void> DriveRelocations::poll(nvme::Device &dev)
{
	auto raw = dev.log_page(nvme::kLidFdpEvents, 0);
	if (!raw) {
		Error e = std::move(raw).error();
		e.context = "reading the FDP events log (0x23): " + e.context;
		return e;
	}
	auto ev = nvme::parse_fdp_events(*raw);
	if (!ev)
		return std::move(ev).error();
	std::lock_guard lk(mu_);
	read_ = true;
	uint32_t same = 0;  // events in this read stamped last_time_, oldest first
	for (const nvme::FdpEvent &e : *ev) {
		const uint64_t t = nvme::fdp_event_time(e);
		if (t < last_time_ || (t == last_time_ && ++same <= at_last_))
			continue;
		if (t > last_time_) {
			last_time_ = t;
			same = 1;
		}
		at_last_ = same;
		if (e.type != nvme::kFdpEventMediaReallocated ||
		    !(e.flags & nvme::kFdpEventFlagPiv))
			continue;
		if ((e.flags & nvme::kFdpEventFlagNsidv) && e.nsid != nsid_)
			continue;
		for (size_t h = 0; h < pids_.size(); h++)
			if (pids_[h] == e.pid) {
				bytes_[h] += uint64_t{nvme::fdp_event_nlbam(e)} * lba_size_;
				events_++;
				break;
			}
	}
	return ok();
}

std::vector<uint64_t> DriveRelocations::bytes() const
{
	std::lock_guard lk(mu_);
	return bytes_;
}

uint64_t DriveRelocations::events() const
{
	std::lock_guard lk(mu_);
	return events_;
}

bool DriveRelocations::read() const
{
	std::lock_guard lk(mu_);
	return read_;
}

std::optional<std::vector<proto::TwinHandle>>
DriveRelocations::report(nvme::Device &dev, const proto::CounterSnapshot &c)
{
	(void)poll(dev);  // a failed read keeps what earlier ones counted
	if (!read())
		return std::nullopt;
	const std::vector<uint64_t> b = bytes();
	std::vector<proto::TwinHandle> out;
	for (uint32_t h = 0; h < b.size(); h++)
		out.push_back({h, h < placement::kMaxHandles ? c.handle_bytes[h] : 0, b[h]});
	return out;
}

}  // namespace kvfdp::daemon
