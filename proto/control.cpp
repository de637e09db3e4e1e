// The control replies' JSON: every key of docs/control.md's documents, written and read here.
#include "proto/control.hpp"

#include "proto/json_read.hpp"
#include "proto/u128_json.hpp"

namespace kvfdp::proto {

using nlohmann::json;

namespace {

// A u128 counter of j[key] (number or decimal string), 0 when absent.
nvme::u128 read_u128(const json &j, const char *key)
{
	return j.is_object() && j.contains(key) ? u128_from_json(j[key]) : 0;
}

}  // namespace

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

void to_json(json &j, const StopRequest &r)
{
	j = {{"force", r.force}};
}

bool parse_stop_request(const json &args, StopRequest &r, std::string &error)
{
	if (!args.is_object() || !args.contains("force"))
		return true;
	if (!args["force"].is_boolean()) {
		error = "stop: \"force\" must be true or false";
		return false;
	}
	r.force = args["force"].get<bool>();
	return true;
}

void to_json(json &j, const ClassRow &r)
{
	j = {{"class", r.cls}, {"handle", r.handle}, {"writes", r.writes}, {"bytes", r.bytes}};
	if (r.with_pid)
		j["pid"] = opt_json(r.pid);
}

void from_json(const json &j, ClassRow &r)
{
	read_field(j, "class", r.cls);
	read_field(j, "handle", r.handle);
	read_field(j, "writes", r.writes);
	read_field(j, "bytes", r.bytes);
	r.with_pid = j.contains("pid");
	read_field(j, "pid", r.pid);
}

void to_json(json &j, const StatusDaemon &v)
{
	if (v.running == false) {
		j = {{"running", false}, {"socket", v.socket}, {"reason", v.reason}};
		return;
	}
	j = {{"version", v.version},   {"pid", v.pid},
	     {"uptime_s", v.uptime_s}, {"config", v.config},
	     {"socket", v.socket},     {"policy_generation", v.policy_generation}};
	if (v.running)
		j["running"] = true;
}

void from_json(const json &j, StatusDaemon &v)
{
	read_field(j, "version", v.version);
	read_field(j, "pid", v.pid);
	read_field(j, "uptime_s", v.uptime_s);
	read_field(j, "config", v.config);
	read_field(j, "socket", v.socket);
	read_field(j, "policy_generation", v.policy_generation);
	read_field(j, "running", v.running);
	read_field(j, "reason", v.reason);
}

void to_json(json &j, const StatusDevice &v)
{
	j = {{"ublk_id", v.ublk_id},
	     {"ublk_path", v.ublk_path},
	     {"backend", v.backend},
	     {"path", v.path},
	     {"nsid", v.nsid},
	     {"lba_size", v.lba_size},
	     {"nlb", v.nlb},
	     {"size_bytes", v.size_bytes},
	     {"max_transfer", v.max_transfer},
	     {"fdp_enabled", v.fdp_enabled},
	     {"nruh", v.nruh},
	     {"nrg", v.nrg},
	     {"ru_size", v.ru_size},
	     {"queues", v.queues},
	     {"depth", v.depth},
	     {"volatile_cache", v.volatile_cache},
	     {"fua", v.fua}};
	if (v.stripe)
		j["stripe"] = *v.stripe;
}

void from_json(const json &j, StatusDevice &v)
{
	read_field(j, "ublk_id", v.ublk_id);
	read_field(j, "ublk_path", v.ublk_path);
	read_field(j, "backend", v.backend);
	read_field(j, "path", v.path);
	read_field(j, "nsid", v.nsid);
	read_field(j, "lba_size", v.lba_size);
	read_field(j, "nlb", v.nlb);
	read_field(j, "size_bytes", v.size_bytes);
	read_field(j, "max_transfer", v.max_transfer);
	read_field(j, "fdp_enabled", v.fdp_enabled);
	read_field(j, "nruh", v.nruh);
	read_field(j, "nrg", v.nrg);
	read_field(j, "ru_size", v.ru_size);
	read_field(j, "queues", v.queues);
	read_field(j, "depth", v.depth);
	read_field(j, "volatile_cache", v.volatile_cache);
	read_field(j, "fua", v.fua);
	read_field(j, "stripe", v.stripe);
}

void to_json(json &j, const StripeDeviceRow &v)
{
	j = {{"member", v.member},     {"path", v.path},       {"nsid", v.nsid},
	     {"lba_size", v.lba_size}, {"nlb", v.nlb},         {"max_transfer", v.max_transfer},
	     {"nruh", v.nruh},         {"ru_size", v.ru_size}, {"fdp_enabled", v.fdp_enabled}};
}

void from_json(const json &j, StripeDeviceRow &v)
{
	read_field(j, "member", v.member);
	read_field(j, "path", v.path);
	read_field(j, "nsid", v.nsid);
	read_field(j, "lba_size", v.lba_size);
	read_field(j, "nlb", v.nlb);
	read_field(j, "max_transfer", v.max_transfer);
	read_field(j, "nruh", v.nruh);
	read_field(j, "ru_size", v.ru_size);
	read_field(j, "fdp_enabled", v.fdp_enabled);
}

void to_json(json &j, const StripeStatus &v)
{
	j = {{"members", v.members},
	     {"stripe_bytes", v.stripe_bytes},
	     {"member_nlb", v.member_nlb},
	     {"note", v.note},
	     {"devices", v.devices}};
}

void from_json(const json &j, StripeStatus &v)
{
	read_field(j, "members", v.members);
	read_field(j, "stripe_bytes", v.stripe_bytes);
	read_field(j, "member_nlb", v.member_nlb);
	read_field(j, "note", v.note);
	if (j.contains("devices") && j["devices"].is_array())
		for (const json &d : j["devices"])
			v.devices.push_back(d.get<StripeDeviceRow>());
}

void to_json(json &j, const StatusKernel &v)
{
	j = {{"release", v.release}, {"ublk_flags", v.ublk_flags}, {"ublk_note", v.ublk_note}};
	if (v.ublk_features)
		j["ublk_features"] = *v.ublk_features;
}

void from_json(const json &j, StatusKernel &v)
{
	read_field(j, "release", v.release);
	read_field(j, "ublk_flags", v.ublk_flags);
	read_field(j, "ublk_features", v.ublk_features);
	read_field(j, "ublk_note", v.ublk_note);
}

void to_json(json &j, const StatusTagging &v)
{
	j = {{"active", v.active}, {"reason", v.reason},     {"sources", v.sources},
	     {"pinned", v.pinned}, {"reopened", v.reopened}, {"watch_dir", v.watch_dir}};
}

void from_json(const json &j, StatusTagging &v)
{
	read_field(j, "active", v.active);
	read_field(j, "reason", v.reason);
	read_field(j, "sources", v.sources);
	read_field(j, "pinned", v.pinned);
	read_field(j, "reopened", v.reopened);
	read_field(j, "watch_dir", v.watch_dir);
}

void to_json(json &j, const StatusIo &v)
{
	j = {{"reads", v.reads},
	     {"read_bytes", v.read_bytes},
	     {"writes", v.writes},
	     {"write_bytes", v.write_bytes},
	     {"flushes", v.flushes},
	     {"discards", v.discards},
	     {"discard_bytes", v.discard_bytes},
	     {"write_zeroes", v.write_zeroes},
	     {"write_zeroes_bytes", v.write_zeroes_bytes},
	     {"errors", v.errors}};
	if (v.copied_bytes)
		j["copied_bytes"] = *v.copied_bytes;
}

void from_json(const json &j, StatusIo &v)
{
	read_field(j, "reads", v.reads);
	read_field(j, "read_bytes", v.read_bytes);
	read_field(j, "writes", v.writes);
	read_field(j, "write_bytes", v.write_bytes);
	read_field(j, "flushes", v.flushes);
	read_field(j, "discards", v.discards);
	read_field(j, "discard_bytes", v.discard_bytes);
	read_field(j, "write_zeroes", v.write_zeroes);
	read_field(j, "write_zeroes_bytes", v.write_zeroes_bytes);
	read_field(j, "errors", v.errors);
	read_field(j, "copied_bytes", v.copied_bytes);
}

void to_json(json &j, const StatusDataPath &v)
{
	j = {{"mode", v.mode}, {"note", v.note}};
}

void from_json(const json &j, StatusDataPath &v)
{
	read_field(j, "mode", v.mode);
	read_field(j, "note", v.note);
}

void to_json(json &j, const StatusRecovery &v)
{
	j = {{"enabled", v.enabled}, {"recovered", v.recovered}, {"state", v.state}};
}

void from_json(const json &j, StatusRecovery &v)
{
	read_field(j, "enabled", v.enabled);
	read_field(j, "recovered", v.recovered);
	read_field(j, "state", v.state);
}

void to_json(json &j, const StatusReply &v)
{
	j = {{"daemon", v.daemon},   {"device", v.device},    {"kernel", v.kernel},
	     {"tagging", v.tagging}, {"classes", v.classes},  {"stale_tags", v.stale_tags},
	     {"io", v.io},           {"recovery", v.recovery}};
	if (v.health)
		j["health"] = *v.health;
	if (v.data_path)
		j["data_path"] = *v.data_path;
}

void from_json(const json &j, StatusReply &v)
{
	read_field(j, "daemon", v.daemon);
	read_field(j, "device", v.device);
	read_field(j, "kernel", v.kernel);
	read_field(j, "tagging", v.tagging);
	read_field(j, "health", v.health);
	if (j.contains("classes") && j["classes"].is_array())
		for (const json &c : j["classes"])
			v.classes.push_back(c.get<ClassRow>());
	read_field(j, "stale_tags", v.stale_tags);
	read_field(j, "io", v.io);
	read_field(j, "data_path", v.data_path);
	read_field(j, "recovery", v.recovery);
}

void mark_daemon_running(json &status)
{
	if (!status.is_object() || !status.contains("daemon") || !status["daemon"].is_object())
		return;
	StatusDaemon d = status["daemon"].get<StatusDaemon>();
	d.running = true;
	status["daemon"] = d;
}

void to_json(json &j, const RuhRow &v)
{
	j = {{"index", v.index},
	     {"pid", v.pid},
	     {"ruhid", v.ruhid},
	     {"earutr", v.earutr},
	     {"ruamw", v.ruamw}};
	if (v.bytes)
		j["bytes"] = *v.bytes;
	if (v.writes)
		j["writes"] = *v.writes;
	if (v.classes)
		j["classes"] = *v.classes;
}

void from_json(const json &j, RuhRow &v)
{
	read_field(j, "index", v.index);
	read_field(j, "pid", v.pid);
	read_field(j, "ruhid", v.ruhid);
	read_field(j, "earutr", v.earutr);
	read_field(j, "ruamw", v.ruamw);
	read_field(j, "bytes", v.bytes);
	read_field(j, "writes", v.writes);
	read_field(j, "classes", v.classes);
}

namespace {

// A ruhss array; a row without "index" is numbered by its place.
std::vector<RuhRow> read_rows(const json &j, const char *key)
{
	std::vector<RuhRow> rows;
	if (!j.is_object() || !j.contains(key) || !j[key].is_array())
		return rows;
	for (const json &h : j[key]) {
		RuhRow r;
		r.index = static_cast<uint16_t>(rows.size());
		if (h.is_object())
			from_json(h, r);
		rows.push_back(std::move(r));
	}
	return rows;
}

}  // namespace

void to_json(json &j, const RuhMember &v)
{
	j = {{"member", v.member},       {"device", v.device}, {"nsid", v.nsid},
	     {"nruhsd", v.ruhss.size()}, {"bytes", v.bytes},   {"ruhss", v.ruhss}};
}

void from_json(const json &j, RuhMember &v)
{
	read_field(j, "member", v.member);
	read_field(j, "device", v.device);
	read_field(j, "nsid", v.nsid);
	read_field(j, "bytes", v.bytes);
	v.ruhss = read_rows(j, "ruhss");
}

void to_json(json &j, const RuhReply &v)
{
	j = {{"nruhsd", v.ruhss.size()}, {"ruhss", v.ruhss}, {"classes", v.classes}};
	if (v.stripe_bytes)
		j["stripe_bytes"] = *v.stripe_bytes;
	if (v.members)
		j["members"] = *v.members;
}

void from_json(const json &j, RuhReply &v)
{
	v.ruhss = read_rows(j, "ruhss");
	if (j.contains("classes") && j["classes"].is_array())
		for (const json &c : j["classes"])
			v.classes.push_back(c.get<ClassRow>());
	read_field(j, "stripe_bytes", v.stripe_bytes);
	if (j.contains("members") && j["members"].is_array()) {
		v.members.emplace();
		for (const json &m : j["members"]) {
			RuhMember rm;
			rm.member = static_cast<uint32_t>(v.members->size());
			if (m.is_object())
				from_json(m, rm);
			v.members->push_back(std::move(rm));
		}
	}
}

bool has_ruh_rows(const json &j)
{
	return j.is_object() && j.contains("ruhss") && j["ruhss"].is_array();
}

std::optional<double> lifetime_waf(nvme::u128 hbmw, nvme::u128 mbmw)
{
	if (!hbmw)
		return std::nullopt;
	return nvme::to_double(mbmw) / nvme::to_double(hbmw);
}

void to_json(json &j, const StatsMember &v)
{
	j = {{"member", v.member},        {"device", v.device},      {"hbmw", u128_json(v.hbmw)},
	     {"mbmw", u128_json(v.mbmw)}, {"mbe", u128_json(v.mbe)}, {"waf", opt_json(v.waf)}};
}

void from_json(const json &j, StatsMember &v)
{
	read_field(j, "member", v.member);
	read_field(j, "device", v.device);
	v.hbmw = read_u128(j, "hbmw");
	v.mbmw = read_u128(j, "mbmw");
	v.mbe = read_u128(j, "mbe");
	read_field(j, "waf", v.waf);
}

void to_json(json &j, const StatsReply &v)
{
	j = {{"hbmw", u128_json(v.hbmw)},
	     {"mbmw", u128_json(v.mbmw)},
	     {"mbe", u128_json(v.mbe)},
	     {"waf", opt_json(v.waf)}};
	if (v.members)
		j["members"] = *v.members;
	if (v.twin)
		j[kTwinKey] = *v.twin;
	if (v.drive_handles)
		j[kDriveHandlesKey] = *v.drive_handles;
}

void from_json(const json &j, StatsReply &v)
{
	v.hbmw = read_u128(j, "hbmw");
	v.mbmw = read_u128(j, "mbmw");
	v.mbe = read_u128(j, "mbe");
	read_field(j, "waf", v.waf);
	if (j.contains("members") && j["members"].is_array()) {
		v.members.emplace();
		for (const json &m : j["members"])
			v.members->push_back(m.get<StatsMember>());
	}
	read_field(j, kTwinKey, v.twin);
	read_array(j, kDriveHandlesKey, v.drive_handles);
}

bool has_fdp_counters(const json &j)
{
	return j.is_object() && j.contains("hbmw") && j.contains("mbmw") && j.contains("mbe");
}

void to_json(json &j, const MetricsReply &v)
{
	j = {{"text", v.text}};
}

void from_json(const json &j, MetricsReply &v)
{
	read_field(j, "text", v.text);
}

void to_json(json &j, const ReloadReply &v)
{
	j = {{"generation", v.generation}};
}

void from_json(const json &j, ReloadReply &v)
{
	read_field(j, "generation", v.generation);
}

void to_json(json &j, const StopReply &v)
{
	j = {{"stopping", v.stopping}, {"force", v.force}, {"safe_stop", v.safe_stop}};
}

void from_json(const json &j, StopReply &v)
{
	read_field(j, "stopping", v.stopping);
	read_field(j, "force", v.force);
	read_field(j, "safe_stop", v.safe_stop);
}

}  // namespace kvfdp::proto
