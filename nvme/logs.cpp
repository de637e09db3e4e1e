// Parsers and encoders for RUH Status, FDP log pages and Identify replies.
#include "nvme/logs.hpp"

#include <cstring>
#include <string>

namespace kvfdp::nvme {
namespace {

template <class T> T load(const uint8_t *p)
{
	T v;
	std::memcpy(&v, p, sizeof(T));
	return v;
}

template <class T> void store(std::vector<uint8_t> &out, size_t off, const T &v)
{
	if (off + sizeof(T) > out.size())
		return;  // callers size out first; this never drops a field
	std::memcpy(out.data() + off, &v, sizeof(T));
}

Error short_buffer(const char *what, size_t need, size_t have)
{
	return make_error(std::errc::bad_message, std::string(what) + ": reply too short (" +
							  std::to_string(have) + " bytes, need " +
							  std::to_string(need) + ")");
}

}  // namespace

u128 read_le128(const uint8_t *p)
{
	u128 v = 0;
	for (int i = 15; i >= 0; --i)
		v = (v << 8) | p[i];
	return v;
}

void write_le128(uint8_t *p, u128 v)
{
	for (int i = 0; i < 16; ++i) {
		p[i] = static_cast<uint8_t>(v & 0xFF);
		v >>= 8;
	}
}

Result<uint16_t> parse_ruh_status_count(std::span<const uint8_t> buf)
{
	if (buf.size() < sizeof(RuhStatusHeader))
		return short_buffer("RUH Status", sizeof(RuhStatusHeader), buf.size());
	return load<RuhStatusHeader>(buf.data()).nruhsd;
}

Result<RuhStatus> parse_ruh_status(std::span<const uint8_t> buf)
{
	auto n = parse_ruh_status_count(buf);
	if (!n)
		return n.error();
	RuhStatus rs;
	rs.nruhsd = *n;
	size_t need = ruh_status_size(rs.nruhsd);
	if (buf.size() < need)
		return short_buffer("RUH Status", need, buf.size());
	rs.descs.resize(rs.nruhsd);
	for (size_t i = 0; i < rs.nruhsd; ++i)
		rs.descs[i] = load<RuhStatusDesc>(buf.data() + ruh_status_size(i));
	return rs;
}

std::vector<uint8_t> encode_ruh_status(std::span<const RuhStatusDesc> descs)
{
	std::vector<uint8_t> out(ruh_status_size(descs.size()), 0);
	RuhStatusHeader h{};
	h.nruhsd = static_cast<uint16_t>(descs.size());
	store(out, 0, h);
	for (size_t i = 0; i < descs.size(); ++i)
		store(out, ruh_status_size(i), descs[i]);
	return out;
}

Result<FdpConfigs> parse_fdp_configs(std::span<const uint8_t> buf)
{
	if (buf.size() < sizeof(FdpConfigsHeader))
		return short_buffer("FDP configurations log", sizeof(FdpConfigsHeader), buf.size());
	auto h = load<FdpConfigsHeader>(buf.data());
	FdpConfigs out;
	out.version = h.version;
	size_t end = buf.size();
	if (h.size >= sizeof(FdpConfigsHeader) && h.size < end)
		end = h.size;
	size_t off = sizeof(FdpConfigsHeader);
	size_t count = size_t{h.n} + 1;  // n is 0-based
	for (size_t i = 0; i < count; ++i) {
		if (off + sizeof(FdpConfigDescHeader) > end)
			return short_buffer("FDP configuration descriptor",
					    off + sizeof(FdpConfigDescHeader), end);
		auto d = load<FdpConfigDescHeader>(buf.data() + off);
		size_t ruh_bytes = size_t{d.nruh} * sizeof(RuhDesc);
		if (d.dsze < sizeof(FdpConfigDescHeader) + ruh_bytes || off + d.dsze > end)
			return make_error(std::errc::bad_message,
					  "FDP configuration descriptor " + std::to_string(i) +
						  ": size " + std::to_string(d.dsze) +
						  " does not fit its " + std::to_string(d.nruh) +
						  " handles or the log");
		FdpConfig c;
		c.fdpa = d.fdpa;
		c.rgif = d.fdpa & kFdpaRgifMask;
		c.vwc = (d.fdpa & kFdpaVwc) != 0;
		c.valid = (d.fdpa & kFdpaValid) != 0;
		c.nrg = d.nrg;
		c.nruh = d.nruh;
		c.maxpids = d.maxpids;
		c.nnss = d.nnss;
		c.runs = d.runs;
		c.erutl = d.erutl;
		c.ruht.resize(d.nruh);
		for (size_t r = 0; r < d.nruh; ++r)
			c.ruht[r] = load<RuhDesc>(buf.data() + off + sizeof(FdpConfigDescHeader) +
						  r * sizeof(RuhDesc))
					    .ruht;
		out.configs.push_back(std::move(c));
		off += d.dsze;
	}
	return out;
}

std::vector<uint8_t> encode_fdp_configs(const FdpConfigs &cfgs)
{
	size_t total = sizeof(FdpConfigsHeader);
	for (const auto &c : cfgs.configs)
		total += sizeof(FdpConfigDescHeader) + c.ruht.size() * sizeof(RuhDesc);
	std::vector<uint8_t> out(total, 0);
	FdpConfigsHeader h{};
	h.n = static_cast<uint16_t>(cfgs.configs.empty() ? 0 : cfgs.configs.size() - 1);
	h.version = cfgs.version;
	h.size = static_cast<uint32_t>(total);
	store(out, 0, h);
	size_t off = sizeof(FdpConfigsHeader);
	for (const auto &c : cfgs.configs) {
		FdpConfigDescHeader d{};
		d.dsze = static_cast<uint16_t>(sizeof(FdpConfigDescHeader) +
					       c.ruht.size() * sizeof(RuhDesc));
		d.fdpa = static_cast<uint8_t>((c.rgif & kFdpaRgifMask) | (c.vwc ? kFdpaVwc : 0) |
					      (c.valid ? kFdpaValid : 0));
		d.nrg = c.nrg;
		d.nruh = static_cast<uint16_t>(c.ruht.size());
		d.maxpids = c.maxpids;
		d.nnss = c.nnss;
		d.runs = c.runs;
		d.erutl = c.erutl;
		store(out, off, d);
		for (size_t r = 0; r < c.ruht.size(); ++r) {
			RuhDesc rd{};
			rd.ruht = c.ruht[r];
			store(out, off + sizeof(FdpConfigDescHeader) + r * sizeof(RuhDesc), rd);
		}
		off += d.dsze;
	}
	return out;
}

Result<std::vector<uint8_t>> parse_ruh_usage(std::span<const uint8_t> buf)
{
	if (buf.size() < sizeof(RuhUsageHeader))
		return short_buffer("RUH usage log", sizeof(RuhUsageHeader), buf.size());
	auto h = load<RuhUsageHeader>(buf.data());
	size_t need = sizeof(RuhUsageHeader) + size_t{h.nruh} * sizeof(RuhUsageDesc);
	if (buf.size() < need)
		return short_buffer("RUH usage log", need, buf.size());
	std::vector<uint8_t> ruha(h.nruh);
	for (size_t i = 0; i < h.nruh; ++i)
		ruha[i] = load<RuhUsageDesc>(buf.data() + sizeof(RuhUsageHeader) +
					     i * sizeof(RuhUsageDesc))
				  .ruha;
	return ruha;
}

std::vector<uint8_t> encode_ruh_usage(std::span<const uint8_t> ruha)
{
	std::vector<uint8_t> out(sizeof(RuhUsageHeader) + ruha.size() * sizeof(RuhUsageDesc), 0);
	RuhUsageHeader h{};
	h.nruh = static_cast<uint16_t>(ruha.size());
	store(out, 0, h);
	for (size_t i = 0; i < ruha.size(); ++i)
		out[sizeof(RuhUsageHeader) + i * sizeof(RuhUsageDesc)] = ruha[i];
	return out;
}

Result<FdpStats> parse_fdp_stats(std::span<const uint8_t> buf)
{
	// The three counters are what matters; the reserved tail may be cut off.
	if (buf.size() < 48)
		return short_buffer("FDP statistics log", 48, buf.size());
	FdpStats s;
	s.hbmw = read_le128(buf.data() + offsetof(FdpStatsLog, hbmw));
	s.mbmw = read_le128(buf.data() + offsetof(FdpStatsLog, mbmw));
	s.mbe = read_le128(buf.data() + offsetof(FdpStatsLog, mbe));
	return s;
}

std::vector<uint8_t> encode_fdp_stats(const FdpStats &stats)
{
	std::vector<uint8_t> out(sizeof(FdpStatsLog), 0);
	write_le128(out.data() + offsetof(FdpStatsLog, hbmw), stats.hbmw);
	write_le128(out.data() + offsetof(FdpStatsLog, mbmw), stats.mbmw);
	write_le128(out.data() + offsetof(FdpStatsLog, mbe), stats.mbe);
	return out;
}

double waf(const FdpStats &before, const FdpStats &after)
{
	if (after.hbmw <= before.hbmw)
		return 0.0;
	u128 dm = after.mbmw >= before.mbmw ? after.mbmw - before.mbmw : 0;
	return to_double(dm) / to_double(after.hbmw - before.hbmw);
}

Result<std::vector<FdpEvent>> parse_fdp_events(std::span<const uint8_t> buf)
{
	if (buf.size() < sizeof(FdpEventsHeader))
		return short_buffer("FDP events log", sizeof(FdpEventsHeader), buf.size());
	auto h = load<FdpEventsHeader>(buf.data());
	if (h.nevents > kFdpEventsMax)
		return make_error(std::errc::bad_message,
				  "FDP events log: " + std::to_string(h.nevents) +
					  " events claimed, at most 63 exist");
	size_t need = sizeof(FdpEventsHeader) + size_t{h.nevents} * sizeof(FdpEvent);
	if (buf.size() < need)
		return short_buffer("FDP events log", need, buf.size());
	std::vector<FdpEvent> ev(h.nevents);
	for (size_t i = 0; i < h.nevents; ++i)
		ev[i] = load<FdpEvent>(buf.data() + sizeof(FdpEventsHeader) + i * sizeof(FdpEvent));
	return ev;
}

std::vector<uint8_t> encode_fdp_events(std::span<const FdpEvent> events)
{
	std::vector<uint8_t> out(sizeof(FdpEventsHeader) + kFdpEventsMax * sizeof(FdpEvent), 0);
	size_t n = events.size() < kFdpEventsMax ? events.size() : kFdpEventsMax;
	FdpEventsHeader h{};
	h.nevents = static_cast<uint32_t>(n);
	store(out, 0, h);
	for (size_t i = 0; i < n; ++i)
		store(out, sizeof(FdpEventsHeader) + i * sizeof(FdpEvent), events[i]);
	return out;
}

const char *fdp_event_name(uint8_t type)
{
	switch (type) {
	case kFdpEventRuNotFullyWritten: return "ru-not-fully-written";
	case kFdpEventRuTimeLimitExceeded: return "ru-time-limit-exceeded";
	case kFdpEventCtrlResetModifiedRuh: return "ctrl-reset-modified-ruh";
	case kFdpEventInvalidPid: return "invalid-pid";
	case kFdpEventMediaReallocated: return "media-reallocated";
	case kFdpEventImplicitlyModifiedRuh: return "implicitly-modified-ruh";
	default: return "unknown";
	}
}

uint64_t fdp_event_time(const FdpEvent &e)
{
	uint64_t ms = 0;
	for (int i = 5; i >= 0; i--)
		ms = ms << 8 | e.timestamp[i];
	return ms;
}

void set_fdp_event_time(FdpEvent &e, uint64_t ms)
{
	for (int i = 0; i < 6; i++)
		e.timestamp[i] = static_cast<uint8_t>(ms >> (8 * i));
}

uint16_t fdp_event_nlbam(const FdpEvent &e)
{
	return static_cast<uint16_t>(e.type_specific[2] | e.type_specific[3] << 8);
}

void set_fdp_event_nlbam(FdpEvent &e, uint16_t nlbam)
{
	e.type_specific[2] = static_cast<uint8_t>(nlbam);
	e.type_specific[3] = static_cast<uint8_t>(nlbam >> 8);
}

Result<IdCtrl> parse_id_ctrl(std::span<const uint8_t> buf)
{
	if (buf.size() < kIdCtrlVwc + 1)
		return short_buffer("Identify Controller", kIdCtrlVwc + 1, buf.size());
	IdCtrl c;
	c.mdts = buf[kIdCtrlMdts];
	c.ctratt = load<uint32_t>(buf.data() + kIdCtrlCtratt);
	c.oncs = load<uint16_t>(buf.data() + kIdCtrlOncs);
	c.vwc = buf[kIdCtrlVwc];
	return c;
}

Result<IdNs> parse_id_ns(std::span<const uint8_t> buf)
{
	constexpr size_t need = kIdNsLbaf + 64 * sizeof(LbaFormat);
	if (buf.size() < need)
		return short_buffer("Identify Namespace", need, buf.size());
	IdNs ns;
	ns.nsze = load<uint64_t>(buf.data() + kIdNsNsze);
	ns.ncap = load<uint64_t>(buf.data() + kIdNsNcap);
	ns.nuse = load<uint64_t>(buf.data() + kIdNsNuse);
	ns.nlbaf = buf[kIdNsNlbaf];
	ns.flbas = buf[kIdNsFlbas];
	ns.endgid = load<uint16_t>(buf.data() + kIdNsEndgid);
	for (size_t i = 0; i < 64; ++i)
		ns.lbaf[i] = load<LbaFormat>(buf.data() + kIdNsLbaf + i * sizeof(LbaFormat));
	return ns;
}

}  // namespace kvfdp::nvme
