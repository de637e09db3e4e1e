// Per-member control replies and metric labels of a striped kvfdpd.
#include "kvfdpd/daemon/ctl/member_view.hpp"

#include "placement/handle_map.hpp"

namespace kvfdp::daemon {

Result<std::vector<proto::RuhMember>> members_ruh(const nvme::StripeDevice &sd,
						  const proto::CounterSnapshot &c)
{
	std::vector<proto::RuhMember> out;
	const auto ms = sd.members();
	for (uint32_t m = 0; m < ms.size(); m++) {
		auto hs = ms[m].device->handles();
		if (!hs)
			return make_error(std::errc::io_error,
					  "reading RUH Status of member " + std::to_string(m) +
						  " (" + ms[m].path +
						  ") failed: " + hs.error().message());
		proto::RuhMember rm{m, ms[m].path, ms[m].device->info().nsid, 0, {}};
		for (const nvme::Handle &h : *hs) {
			const uint64_t b =
				m < nvme::kMaxStripeMembers && h.index < placement::kMaxHandles
					? c.member_handle_bytes[m][h.index]
					: 0;
			rm.bytes += b;
			proto::RuhRow r{h.index, h.pid, h.ruhid, h.earutr, h.ruamw, b, {}, {}};
			rm.ruhss.push_back(std::move(r));
		}
		out.push_back(std::move(rm));
	}
	return out;
}

Result<std::vector<MemberStats>> read_member_stats(const nvme::StripeDevice &sd)
{
	std::vector<MemberStats> out;
	const auto ms = sd.members();
	for (uint32_t m = 0; m < ms.size(); m++) {
		const std::string who = "member " + std::to_string(m) + " (" + ms[m].path + ")";
		auto raw = ms[m].device->log_page(0x22);
		if (!raw)
			return make_error(std::errc::io_error,
					  "reading the FDP statistics log (0x22) of " + who +
						  " failed: " + raw.error().message());
		auto st = nvme::parse_fdp_stats(*raw);
		if (!st)
			return make_error(std::errc::io_error,
					  "decoding the FDP statistics log of " + who +
						  " failed: " + st.error().message());
		out.push_back({m, ms[m].path, *st});
	}
	return out;
}

std::vector<proto::StatsMember> members_stats(const std::vector<MemberStats> &ms)
{
	std::vector<proto::StatsMember> out;
	for (const MemberStats &m : ms)
		out.push_back({m.member, m.path, m.stats.hbmw, m.stats.mbmw, m.stats.mbe,
			       proto::lifetime_waf(m.stats.hbmw, m.stats.mbmw)});
	return out;
}

proto::StripeStatus stripe_status(const nvme::StripeDevice &sd)
{
	const auto ms = sd.members();
	proto::StripeStatus st{ms.size(), sd.stripe_bytes(), sd.member_nlb(), sd.note(), {}};
	for (uint32_t m = 0; m < ms.size(); m++) {
		const nvme::DeviceInfo &i = ms[m].device->info();
		st.devices.push_back({m, ms[m].path, i.nsid, i.lba_size, i.nlb, i.max_transfer,
				      i.nruh, i.ru_size, i.fdp_enabled});
	}
	return st;
}

void label_member(std::vector<proto::MetricFamily> &fams, uint32_t member, const std::string &path)
{
	for (proto::MetricFamily &f : fams)
		for (proto::MetricSample &s : f.samples) {
			s.labels.emplace_back("member", std::to_string(member));
			s.labels.emplace_back("device", path);
		}
}

void merge_families(std::vector<proto::MetricFamily> &dst, std::vector<proto::MetricFamily> src)
{
	for (proto::MetricFamily &f : src) {
		proto::MetricFamily *into = nullptr;
		for (proto::MetricFamily &d : dst)
			if (d.name == f.name)
				into = &d;
		if (!into) {
			dst.push_back(std::move(f));
			continue;
		}
		for (proto::MetricSample &s : f.samples)
			into->samples.push_back(std::move(s));
	}
}

}  // namespace kvfdp::daemon
