// Handles and statistics from kvfdpd or a device.
#include "proto/backend_kind.hpp"
#include "proto/control.hpp"
#include "cli/source.hpp"

#include "cli/units.hpp"
#include "cli/fdp_view.hpp"

namespace kvfdp::cli {

std::optional<Error> fdp_unusable(const nvme::DeviceInfo &info)
{
	if (!info.fdp_supported)
		return cli_error(
			proto::kExitUnsupported,
			info.path + " does not support FDP (Identify Controller CTRATT bit 19 "
				    "is 0); it has no placement handles. `kvfdp simulate` or "
				    "--backend model can project the WAF placement would give");
	if (!info.fdp_enabled)
		return cli_error(
			proto::kExitUnsupported,
			info.path + " supports FDP but it is disabled (Get Features 0x1D bit 0 "
				    "is 0); enable it on the endurance group (nvme set-feature -f "
				    "0x1d, which needs an empty endurance group), or use --backend "
				    "model");
	return std::nullopt;
}

Result<RuhView> ruh_from_device(nvme::Device &dev)
{
	const auto &info = dev.info();
	if (auto e = fdp_unusable(info))
		return *e;
	auto hs = dev.handles();
	if (!hs)
		return std::move(hs).error();
	RuhView v;
	v.source = "device";
	v.device = display_path(info);
	v.backend = info.backend;
	v.lba_size = info.lba_size;
	auto map = default_class_map(static_cast<unsigned>(hs->size()));
	for (const auto &h : *hs) {
		proto::RuhRow r;
		r.index = h.index;
		r.pid = h.pid;
		r.ruhid = h.ruhid;
		r.earutr = h.earutr;
		r.ruamw = h.ruamw;
		r.classes.emplace();
		for (int c : classes_on_handle(map, h.index))
			r.classes->emplace_back(class_name(c));
		v.rows.push_back(std::move(r));
	}
	return v;
}

Result<RuhView> ruh_from_daemon_data(const nlohmann::json &ruh, const nlohmann::json &status)
{
	if (!proto::has_ruh_rows(ruh))
		return cli_error(proto::kExitError,
				 "kvfdpd's ruh reply has no ruhss array; is the CLI older "
				 "or newer than the daemon? compare `kvfdp version`");
	const auto r = proto::reply_as<proto::RuhReply>(ruh);
	const proto::StatusDevice dev = proto::reply_as<proto::StatusReply>(status).device;
	RuhView v;
	v.source = "daemon";
	v.device = dev.path;
	v.backend = dev.backend;
	v.lba_size = dev.lba_size;
	v.rows = r.ruhss;
	v.stripe_bytes = r.stripe_bytes.value_or(0);
	if (r.members)
		for (const proto::RuhMember &m : *r.members)
			v.members.push_back({m.member, m.device, m.bytes, m.ruhss});
	return v;
}

namespace {
nlohmann::json rows_json(const std::vector<proto::RuhRow> &rs, uint32_t lba_size)
{
	nlohmann::json rows = nlohmann::json::array();
	for (const auto &r : rs) {
		nlohmann::json j = {{"index", r.index},
				    {"pid", r.pid},
				    {"ruhid", r.ruhid},
				    {"earutr", r.earutr},
				    {"ruamw", r.ruamw},
				    {"ruamw_bytes", r.ruamw * lba_size},
				    {"classes", r.classes.value_or(std::vector<std::string>{})}};
		j["bytes_written"] = r.bytes ? nlohmann::json(*r.bytes) : nlohmann::json(nullptr);
		j["writes"] = r.writes ? nlohmann::json(*r.writes) : nlohmann::json(nullptr);
		rows.push_back(std::move(j));
	}
	return rows;
}
}  // namespace

nlohmann::json to_json(const RuhView &v)
{
	nlohmann::json d = {{"source", v.source},      {"device", v.device},
			    {"backend", v.backend},    {"lba_size", v.lba_size},
			    {"nruhsd", v.rows.size()}, {"ruhss", rows_json(v.rows, v.lba_size)}};
	if (!v.members.empty()) {
		d["stripe_bytes"] = v.stripe_bytes;
		nlohmann::json ms = nlohmann::json::array();
		for (const auto &m : v.members)
			ms.push_back({{"member", m.member},
				      {"device", m.device},
				      {"bytes_written", m.bytes},
				      {"nruhsd", m.rows.size()},
				      {"ruhss", rows_json(m.rows, v.lba_size)}});
		d["members"] = ms;
	}
	return d;
}

Result<nvme::FdpStats> stats_from_device(nvme::Device &dev)
{
	if (auto e = fdp_unusable(dev.info()))
		return *e;
	auto raw = dev.log_page(nvme::kLidFdpStats);
	if (!raw)
		return std::move(raw).error();
	return nvme::parse_fdp_stats(*raw);
}

Result<nvme::FdpStats> stats_from_daemon_data(const nlohmann::json &d)
{
	if (!proto::has_fdp_counters(d))
		return cli_error(proto::kExitError,
				 "kvfdpd's stats reply lacks hbmw/mbmw/mbe; is the CLI "
				 "older or newer than the daemon? compare `kvfdp version`");
	const auto r = proto::reply_as<proto::StatsReply>(d);
	return nvme::FdpStats{r.hbmw, r.mbmw, r.mbe};
}

Result<std::unique_ptr<nvme::Device>> open_log_device(CommandContext &ctx)
{
	if (ctx.direct())
		return ctx.open_device();
	auto st = ctx.ask_daemon(proto::cmd::kStatus);
	if (!st.ok) {
		int code = st.error.kind == DaemonFailure::unreachable ? proto::kExitNoDevice
								       : proto::kExitError;
		return cli_error(code, st.error.message);
	}
	const proto::StatusDevice dev = proto::reply_as<proto::StatusReply>(st.data).device;
	const std::string &backend = dev.backend;
	const std::string &path = dev.path;
	if (!proto::backend_passthru_logs(backend) || path.empty())
		return cli_error(
			proto::kExitUnsupported,
			"kvfdpd serves a '" + backend +
				"' backend, whose FDP logs the CLI "
				"cannot read; use --backend model with the daemon's shape, or --device");
	ctx.device = path;
	return ctx.open_device();
}

}  // namespace kvfdp::cli
