// Per-member control replies and metric labels of a striped kvfdpd.
#include "userspace/daemon/member_view.hpp"

#include "placement/handle_map.hpp"

namespace kvfdp::daemon {

using nlohmann::json;

Result<json> members_ruh_json(const nvme::StripeDevice &sd, const CounterSnapshot &c)
{
	json out = json::array();
	const auto ms = sd.members();
	for (uint32_t m = 0; m < ms.size(); m++) {
		auto hs = ms[m].device->handles();
		if (!hs)
			return make_error(std::errc::io_error, "reading RUH Status of member " + std::to_string(m) + " (" +
								       ms[m].path + ") failed: " + hs.error().message());
		json rows = json::array();
		uint64_t total = 0;
		for (const nvme::Handle &h : *hs) {
			const uint64_t b = m < nvme::kMaxStripeMembers && h.index < placement::kMaxHandles
						   ? c.member_handle_bytes[m][h.index]
						   : 0;
			total += b;
			rows.push_back({{"index", h.index}, {"pid", h.pid}, {"ruhid", h.ruhid}, {"earutr", h.earutr},
					{"ruamw", h.ruamw}, {"bytes", b}});
		}
		out.push_back({{"member", m}, {"device", ms[m].path}, {"nsid", ms[m].device->info().nsid},
			       {"nruhsd", hs->size()}, {"bytes", total}, {"ruhss", rows}});
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
			return make_error(std::errc::io_error, "reading the FDP statistics log (0x22) of " + who +
								       " failed: " + raw.error().message());
		auto st = nvme::parse_fdp_stats(*raw);
		if (!st)
			return make_error(std::errc::io_error,
					  "decoding the FDP statistics log of " + who + " failed: " + st.error().message());
		out.push_back({m, ms[m].path, *st});
	}
	return out;
}

json members_stats_json(const std::vector<MemberStats> &ms)
{
	json out = json::array();
	for (const MemberStats &m : ms)
		out.push_back({{"member", m.member}, {"device", m.path}, {"hbmw", u128_json(m.stats.hbmw)},
			       {"mbmw", u128_json(m.stats.mbmw)}, {"mbe", u128_json(m.stats.mbe)},
			       {"waf", m.stats.hbmw ? json(nvme::to_double(m.stats.mbmw) / nvme::to_double(m.stats.hbmw))
						    : json(nullptr)}});
	return out;
}

json stripe_status_json(const nvme::StripeDevice &sd)
{
	json devs = json::array();
	const auto ms = sd.members();
	for (uint32_t m = 0; m < ms.size(); m++) {
		const nvme::DeviceInfo &i = ms[m].device->info();
		devs.push_back({{"member", m}, {"path", ms[m].path}, {"nsid", i.nsid}, {"lba_size", i.lba_size},
				{"nlb", i.nlb}, {"max_transfer", i.max_transfer}, {"nruh", i.nruh},
				{"ru_size", i.ru_size}, {"fdp_enabled", i.fdp_enabled}});
	}
	return {{"members", ms.size()}, {"stripe_bytes", sd.stripe_bytes()}, {"member_nlb", sd.member_nlb()},
		{"note", sd.note()}, {"devices", devs}};
}

void label_member(std::vector<MetricFamily> &fams, uint32_t member, const std::string &path)
{
	for (MetricFamily &f : fams)
		for (MetricSample &s : f.samples) {
			s.labels.emplace_back("member", std::to_string(member));
			s.labels.emplace_back("device", path);
		}
}

void merge_families(std::vector<MetricFamily> &dst, std::vector<MetricFamily> src)
{
	for (MetricFamily &f : src) {
		MetricFamily *into = nullptr;
		for (MetricFamily &d : dst)
			if (d.name == f.name)
				into = &d;
		if (!into) {
			dst.push_back(std::move(f));
			continue;
		}
		for (MetricSample &s : f.samples)
			into->samples.push_back(std::move(s));
	}
}

} // namespace kvfdp::daemon
