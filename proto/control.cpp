// The control replies' JSON: every key of docs/control.md's documents, in one field table per
// struct (proto/json_fields.hpp), written and read here.
#include "proto/control.hpp"

#include "proto/json_fields.hpp"

namespace kvfdp::proto {

using nlohmann::json;

std::string known_commands()
{
	std::string s;
	for (const char *c : {cmd::kStatus, cmd::kRuh, cmd::kFiles, cmd::kPolicy, cmd::kReload,
			      cmd::kStop, cmd::kStats, cmd::kMetrics, cmd::kTwinWindow})
		s += (s.empty() ? "" : ", ") + std::string(c);
	return s;
}

bool changes_state(std::string_view c)
{
	return c == cmd::kStop || c == cmd::kReload;
}

// The stop request's one key, and the stop reply's echo of it.
constexpr const char *kForce = "force";

void to_json(json &j, const StopRequest &r)
{
	j = {{kForce, r.force}};
}

bool parse_stop_request(const json &args, StopRequest &r, std::string &error)
{
	if (!args.is_object() || !args.contains(kForce))
		return true;
	if (!args[kForce].is_boolean()) {
		error = std::string("stop: \"") + kForce + "\" must be true or false";
		return false;
	}
	r.force = args[kForce].get<bool>();
	return true;
}

namespace {

constexpr auto kClassRow =
	std::tuple{field("class", &ClassRow::cls), field("handle", &ClassRow::handle),
		   field("writes", &ClassRow::writes), field("bytes", &ClassRow::bytes)};
// A class row's placement ID: written (null when empty) only with with_pid.
constexpr const char *kClassPid = "pid";

// A stopped kvfdpd's daemon object holds kDaemonBoth (running false) and kDaemonReason; a
// running one's kDaemonOwn and kDaemonBoth.
constexpr auto kDaemonOwn = std::tuple{
	field("version", &StatusDaemon::version), field("pid", &StatusDaemon::pid),
	field("uptime_s", &StatusDaemon::uptime_s), field("config", &StatusDaemon::config),
	field("policy_generation", &StatusDaemon::policy_generation)};
constexpr auto kDaemonBoth = std::tuple{field("running", &StatusDaemon::running),
					field("socket", &StatusDaemon::socket)};
constexpr auto kDaemonReason = std::tuple{field("reason", &StatusDaemon::reason)};

constexpr auto kStatusDevice = std::tuple{field("ublk_id", &StatusDevice::ublk_id),
					  field("ublk_path", &StatusDevice::ublk_path),
					  field("backend", &StatusDevice::backend),
					  field("path", &StatusDevice::path),
					  field("nsid", &StatusDevice::nsid),
					  field("lba_size", &StatusDevice::lba_size),
					  field("nlb", &StatusDevice::nlb),
					  field("size_bytes", &StatusDevice::size_bytes),
					  field("max_transfer", &StatusDevice::max_transfer),
					  field("fdp_enabled", &StatusDevice::fdp_enabled),
					  field("nruh", &StatusDevice::nruh),
					  field("nrg", &StatusDevice::nrg),
					  field("ru_size", &StatusDevice::ru_size),
					  field("queues", &StatusDevice::queues),
					  field("depth", &StatusDevice::depth),
					  field("volatile_cache", &StatusDevice::volatile_cache),
					  field("fua", &StatusDevice::fua),
					  field("stripe", &StatusDevice::stripe)};

constexpr auto kStripeDeviceRow = std::tuple{field("member", &StripeDeviceRow::member),
					     field("path", &StripeDeviceRow::path),
					     field("nsid", &StripeDeviceRow::nsid),
					     field("lba_size", &StripeDeviceRow::lba_size),
					     field("nlb", &StripeDeviceRow::nlb),
					     field("max_transfer", &StripeDeviceRow::max_transfer),
					     field("nruh", &StripeDeviceRow::nruh),
					     field("ru_size", &StripeDeviceRow::ru_size),
					     field("fdp_enabled", &StripeDeviceRow::fdp_enabled)};

constexpr auto kStripeStatus = std::tuple{field("members", &StripeStatus::members),
					  field("stripe_bytes", &StripeStatus::stripe_bytes),
					  field("member_nlb", &StripeStatus::member_nlb),
					  field("note", &StripeStatus::note),
					  every_row("devices", &StripeStatus::devices)};

constexpr auto kStatusKernel = std::tuple{field("release", &StatusKernel::release),
					  field("ublk_flags", &StatusKernel::ublk_flags),
					  field("ublk_features", &StatusKernel::ublk_features),
					  field("ublk_note", &StatusKernel::ublk_note)};

constexpr auto kStatusTagging = std::tuple{
	field("active", &StatusTagging::active),     field("reason", &StatusTagging::reason),
	field("sources", &StatusTagging::sources),   field("pinned", &StatusTagging::pinned),
	field("reopened", &StatusTagging::reopened), field("watch_dir", &StatusTagging::watch_dir)};

constexpr auto kStatusIo = std::tuple{field("reads", &StatusIo::reads),
				      field("read_bytes", &StatusIo::read_bytes),
				      field("writes", &StatusIo::writes),
				      field("write_bytes", &StatusIo::write_bytes),
				      field("flushes", &StatusIo::flushes),
				      field("discards", &StatusIo::discards),
				      field("discard_bytes", &StatusIo::discard_bytes),
				      field("write_zeroes", &StatusIo::write_zeroes),
				      field("write_zeroes_bytes", &StatusIo::write_zeroes_bytes),
				      field("errors", &StatusIo::errors),
				      field("copied_bytes", &StatusIo::copied_bytes)};

constexpr auto kStatusDataPath =
	std::tuple{field("mode", &StatusDataPath::mode), field("note", &StatusDataPath::note)};

constexpr auto kStatusRecovery = std::tuple{field("enabled", &StatusRecovery::enabled),
					    field("recovered", &StatusRecovery::recovered),
					    field("state", &StatusRecovery::state)};

// The status reply's daemon object (mark_daemon_running marks it).
constexpr const char *kDaemon = "daemon";

constexpr auto kStatusReply = std::tuple{
	field(kDaemon, &StatusReply::daemon),          field("device", &StatusReply::device),
	field("kernel", &StatusReply::kernel),         field("tagging", &StatusReply::tagging),
	field("health", &StatusReply::health),         every_row("classes", &StatusReply::classes),
	field("stale_tags", &StatusReply::stale_tags), field("io", &StatusReply::io),
	field("data_path", &StatusReply::data_path),   field("recovery", &StatusReply::recovery)};

constexpr auto kRuhRow =
	std::tuple{field("index", &RuhRow::index),   field("pid", &RuhRow::pid),
		   field("ruhid", &RuhRow::ruhid),   field("earutr", &RuhRow::earutr),
		   field("ruamw", &RuhRow::ruamw),   field("bytes", &RuhRow::bytes),
		   field("writes", &RuhRow::writes), field("classes", &RuhRow::classes)};

// A ruhss array (a row without "index" is numbered by its place) and its size, written beside
// it as nruhsd.
constexpr const char *kRuhss = "ruhss";
constexpr const char *kNruhsd = "nruhsd";

constexpr auto kRuhMember =
	std::tuple{field("member", &RuhMember::member), field("device", &RuhMember::device),
		   field("nsid", &RuhMember::nsid), field("bytes", &RuhMember::bytes),
		   every_row(kRuhss, &RuhMember::ruhss, &RuhRow::index)};

constexpr auto kRuhReply = std::tuple{every_row(kRuhss, &RuhReply::ruhss, &RuhRow::index),
				      every_row("classes", &RuhReply::classes),
				      field("stripe_bytes", &RuhReply::stripe_bytes),
				      every_row("members", &RuhReply::members, &RuhMember::member)};

// The FDP statistics log's three counters of a stats reply or of one of its members.
template <class S> constexpr auto fdp_counters()
{
	return std::tuple{u128_field("hbmw", &S::hbmw), u128_field("mbmw", &S::mbmw),
			  u128_field("mbe", &S::mbe)};
}

constexpr auto kStatsMember = std::tuple_cat(
	std::tuple{field("member", &StatsMember::member), field("device", &StatsMember::device)},
	fdp_counters<StatsMember>(), std::tuple{nullable("waf", &StatsMember::waf)});

constexpr auto kStatsReply = std::tuple_cat(
	fdp_counters<StatsReply>(),
	std::tuple{nullable("waf", &StatsReply::waf), every_row("members", &StatsReply::members),
		   field(kTwinKey, &StatsReply::twin),
		   field(kDriveHandlesKey, &StatsReply::drive_handles)});

constexpr auto kMetricsReply = std::tuple{field("text", &MetricsReply::text)};

constexpr auto kReloadReply = std::tuple{field("generation", &ReloadReply::generation)};

constexpr auto kStopReply =
	std::tuple{field("stopping", &StopReply::stopping), field(kForce, &StopReply::force),
		   field("safe_stop", &StopReply::safe_stop)};

}  // namespace

void to_json(json &j, const ClassRow &r)
{
	write_fields(j, r, kClassRow);
	if (r.with_pid)
		j[kClassPid] = opt_json(r.pid);
}

void from_json(const json &j, ClassRow &r)
{
	read_fields(j, r, kClassRow);
	r.with_pid = j.contains(kClassPid);
	read_field(j, kClassPid, r.pid);
}

void to_json(json &j, const StatusDaemon &v)
{
	if (v.running == false)
		write_fields(j, v, std::tuple_cat(kDaemonBoth, kDaemonReason));
	else
		write_fields(j, v, std::tuple_cat(kDaemonOwn, kDaemonBoth));
}

void from_json(const json &j, StatusDaemon &v)
{
	read_fields(j, v, std::tuple_cat(kDaemonOwn, kDaemonBoth, kDaemonReason));
}

KVFDP_JSON_FIELDS(StatusDevice, kStatusDevice);
KVFDP_JSON_FIELDS(StripeDeviceRow, kStripeDeviceRow);
KVFDP_JSON_FIELDS(StripeStatus, kStripeStatus);
KVFDP_JSON_FIELDS(StatusKernel, kStatusKernel);
KVFDP_JSON_FIELDS(StatusTagging, kStatusTagging);
KVFDP_JSON_FIELDS(StatusIo, kStatusIo);
KVFDP_JSON_FIELDS(StatusDataPath, kStatusDataPath);
KVFDP_JSON_FIELDS(StatusRecovery, kStatusRecovery);
KVFDP_JSON_FIELDS(StatusReply, kStatusReply);

void mark_daemon_running(json &status)
{
	if (!status.is_object() || !status.contains(kDaemon) || !status[kDaemon].is_object())
		return;
	StatusDaemon d = status[kDaemon].get<StatusDaemon>();
	d.running = true;
	status[kDaemon] = d;
}

KVFDP_JSON_FIELDS(RuhRow, kRuhRow);

void to_json(json &j, const RuhMember &v)
{
	write_fields(j, v, kRuhMember);
	j[kNruhsd] = v.ruhss.size();
}

void from_json(const json &j, RuhMember &v)
{
	read_fields(j, v, kRuhMember);
}

void to_json(json &j, const RuhReply &v)
{
	write_fields(j, v, kRuhReply);
	j[kNruhsd] = v.ruhss.size();
}

void from_json(const json &j, RuhReply &v)
{
	read_fields(j, v, kRuhReply);
}

bool has_ruh_rows(const json &j)
{
	return j.is_object() && j.contains(kRuhss) && j[kRuhss].is_array();
}

std::optional<double> lifetime_waf(nvme::u128 hbmw, nvme::u128 mbmw)
{
	if (!hbmw)
		return std::nullopt;
	return nvme::to_double(mbmw) / nvme::to_double(hbmw);
}

KVFDP_JSON_FIELDS(StatsMember, kStatsMember);
KVFDP_JSON_FIELDS(StatsReply, kStatsReply);

bool has_fdp_counters(const json &j)
{
	return has_keys(j, fdp_counters<StatsReply>());
}

KVFDP_JSON_FIELDS(MetricsReply, kMetricsReply);
KVFDP_JSON_FIELDS(ReloadReply, kReloadReply);
KVFDP_JSON_FIELDS(StopReply, kStopReply);

}  // namespace kvfdp::proto
