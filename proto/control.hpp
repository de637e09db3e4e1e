// kvfdpd's control socket (docs/control.md): the command names, the requests' arguments and
// the replies' data, one struct each with one to_json / from_json, both made from the
// struct's field table in control.cpp (proto/json_fields.hpp). kvfdpd writes its replies
// from these and the kvfdp CLI reads them back through them, so every key is spelled there
// only (the files and policy replies in proto/files_reply.hpp and proto/policy_reply.hpp,
// the stats reply's twin in proto/twin_stats.hpp). from_json is lenient
// (proto/json_read.hpp): a key missing from a reply leaves the field's default, an optional
// empty.
#pragma once

#include <cstdint>
#include <optional>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvme/u128.hpp"
#include "proto/health.hpp"
#include "proto/default_paths.hpp"
#include "proto/twin_stats.hpp"

namespace kvfdp::proto {

// The commands, in the order the unknown-cmd reply lists them.
namespace cmd {
inline constexpr const char *kStatus = "status";
inline constexpr const char *kRuh = "ruh";
inline constexpr const char *kFiles = "files";
inline constexpr const char *kPolicy = "policy";
inline constexpr const char *kReload = "reload";
inline constexpr const char *kStop = "stop";
inline constexpr const char *kStats = "stats";
inline constexpr const char *kMetrics = "metrics";
inline constexpr const char *kTwinWindow = "twin_window";  // proto/twin_window.hpp
}  // namespace cmd
// "status, ruh, files, policy, reload, stop, stats, metrics, twin_window".
[[nodiscard]] std::string known_commands();
// Who may send what (docs/control.md, Access): the socket is root:kClientGroup 0660, so its
// members send the read-only requests; those that change state (changes_state) need uid 0 or
// kAdminGroup (both from sysusers.d/kvfdp.conf).
inline constexpr const char *kClientGroup = "kvfdp";
inline constexpr const char *kAdminGroup = "kvfdp-admin";
// True for a request that changes kvfdpd's state: stop (with or without force), reload.
[[nodiscard]] bool changes_state(std::string_view cmd);
// The most bytes of one reply line, '\n' included (docs/control.md, Limits): kvfdpd never
// sends a longer one, and the CLI reads none longer.
inline constexpr size_t kMaxReplyBytes = 1u << 20;
// The framing (docs/control.md, Framing): a request {"cmd":NAME,...}; a reply
// {"ok":true,"data":{...}} or {"ok":false,"error":"..."}.
inline constexpr const char *kCmdKey = "cmd";
inline constexpr const char *kOkKey = "ok";
inline constexpr const char *kDataKey = "data";
inline constexpr const char *kErrorKey = "error";

// {"cmd":"stop","force":true}: stop even while the disk is held.
struct StopRequest {
	bool force = false;
};
void to_json(nlohmann::json &j, const StopRequest &r);
// The request's "force" (absent: false); false with the one-line refusal when not a boolean.
[[nodiscard]] bool parse_stop_request(const nlohmann::json &args, StopRequest &r,
				      std::string &error);

// One class's row: status "classes", ruh "classes" (with pid: the handle's placement ID,
// null when the handle is not on the device).
struct ClassRow {
	std::string cls;
	uint16_t handle = 0;
	uint64_t writes = 0;
	uint64_t bytes = 0;
	bool with_pid = false;
	std::optional<uint16_t> pid;
};
void to_json(nlohmann::json &j, const ClassRow &r);
void from_json(const nlohmann::json &j, ClassRow &r);

// status: "daemon". `kvfdp status` adds running: true over kvfdpd's reply; without kvfdpd
// it shows running false, the socket and the reason only (docs/cli.md).
struct StatusDaemon {
	std::string version;
	int64_t pid = 0;
	int64_t uptime_s = 0;
	std::string config;
	std::string socket;
	uint64_t policy_generation = 0;
	std::optional<bool> running;
	std::string reason;  // why not running
};
// status: "device"."stripe": one member namespace of a stripe.
struct StripeDeviceRow {
	uint32_t member = 0;
	std::string path;
	uint32_t nsid = 0;
	uint32_t lba_size = 0;
	uint64_t nlb = 0;
	uint32_t max_transfer = 0;
	uint16_t nruh = 0;
	uint64_t ru_size = 0;
	bool fdp_enabled = false;
};
// status: "device"."stripe": a stripe's geometry (nvme/stripe.hpp).
struct StripeStatus {
	uint64_t members = 0;
	uint64_t stripe_bytes = 0;
	uint64_t member_nlb = 0;  // LBAs used on each member
	std::string note;
	std::vector<StripeDeviceRow> devices;
};
void to_json(nlohmann::json &j, const StripeDeviceRow &v);
void from_json(const nlohmann::json &j, StripeDeviceRow &v);
void to_json(nlohmann::json &j, const StripeStatus &v);
void from_json(const nlohmann::json &j, StripeStatus &v);

// status: "device" (a stripe's geometry in "stripe").
struct StatusDevice {
	int64_t ublk_id = 0;
	std::string ublk_path;
	std::string backend;
	std::string path;
	uint32_t nsid = 0;
	uint32_t lba_size = 0;
	uint64_t nlb = 0;
	uint64_t size_bytes = 0;
	uint32_t max_transfer = 0;
	bool fdp_enabled = false;
	uint16_t nruh = 0;
	uint16_t nrg = 0;
	uint64_t ru_size = 0;
	uint32_t queues = 0;
	uint32_t depth = 0;
	bool volatile_cache = false;
	bool fua = false;
	std::optional<StripeStatus> stripe;
};
// status: "kernel".
struct StatusKernel {
	std::string release;
	std::string ublk_flags;  // "0x..."
	std::optional<std::vector<std::string>> ublk_features;
	std::string ublk_note;
};
// status: "tagging".
struct StatusTagging {
	bool active = false;
	std::string reason;
	std::vector<std::string> sources;
	std::string pinned;
	bool reopened = false;
	std::string watch_dir;
};
// status: "io", requests and bytes since start.
struct StatusIo {
	uint64_t reads = 0, read_bytes = 0, writes = 0, write_bytes = 0, flushes = 0;
	uint64_t discards = 0, discard_bytes = 0, write_zeroes = 0, write_zeroes_bytes = 0;
	uint64_t errors = 0;
	std::optional<uint64_t> copied_bytes;
};
// status: "data_path".
struct StatusDataPath {
	std::string mode;  // zero-copy | zero-copy-register | copy
	std::string note;
};
// status: "recovery".
struct StatusRecovery {
	bool enabled = false;
	bool recovered = false;
	std::string state;
};
struct StatusReply {
	StatusDaemon daemon;
	StatusDevice device;
	StatusKernel kernel;
	StatusTagging tagging;
	std::optional<Health> health;
	std::vector<ClassRow> classes;
	uint64_t stale_tags = 0;
	StatusIo io;
	std::optional<StatusDataPath> data_path;
	StatusRecovery recovery;
};
void to_json(nlohmann::json &j, const StatusDaemon &v);
void from_json(const nlohmann::json &j, StatusDaemon &v);
void to_json(nlohmann::json &j, const StatusDevice &v);
void from_json(const nlohmann::json &j, StatusDevice &v);
void to_json(nlohmann::json &j, const StatusKernel &v);
void from_json(const nlohmann::json &j, StatusKernel &v);
void to_json(nlohmann::json &j, const StatusTagging &v);
void from_json(const nlohmann::json &j, StatusTagging &v);
void to_json(nlohmann::json &j, const StatusIo &v);
void from_json(const nlohmann::json &j, StatusIo &v);
void to_json(nlohmann::json &j, const StatusDataPath &v);
void from_json(const nlohmann::json &j, StatusDataPath &v);
void to_json(nlohmann::json &j, const StatusRecovery &v);
void from_json(const nlohmann::json &j, StatusRecovery &v);
void to_json(nlohmann::json &j, const StatusReply &v);
void from_json(const nlohmann::json &j, StatusReply &v);
// A status reply's JSON with its daemon marked running (`kvfdp status` over kvfdpd).
void mark_daemon_running(nlohmann::json &status);

// ruh: one handle of RUH Status with kvfdpd's counts (a stripe member's rows have no writes
// and no classes).
struct RuhRow {
	uint16_t index = 0;
	uint16_t pid = 0;
	uint16_t ruhid = 0;
	uint32_t earutr = 0;
	uint64_t ruamw = 0;  // LBAs
	std::optional<uint64_t> bytes;
	std::optional<uint64_t> writes;
	std::optional<std::vector<std::string>> classes;
};
// ruh: a stripe member's own RUH Status.
struct RuhMember {
	uint32_t member = 0;
	std::string device;
	uint32_t nsid = 0;
	uint64_t bytes = 0;
	std::vector<RuhRow> ruhss;
};
struct RuhReply {
	std::vector<RuhRow> ruhss;  // "nruhsd" is its size
	std::vector<ClassRow> classes;
	std::optional<uint64_t> stripe_bytes;
	std::optional<std::vector<RuhMember>> members;
};
void to_json(nlohmann::json &j, const RuhRow &v);
void from_json(const nlohmann::json &j, RuhRow &v);
void to_json(nlohmann::json &j, const RuhMember &v);
void from_json(const nlohmann::json &j, RuhMember &v);
void to_json(nlohmann::json &j, const RuhReply &v);
void from_json(const nlohmann::json &j, RuhReply &v);
// Whether a ruh reply carries its ruhss array.
[[nodiscard]] bool has_ruh_rows(const nlohmann::json &j);

// stats: the FDP statistics log's counters (proto/u128_json.hpp forms), waf = mbmw / hbmw
// (null when hbmw is 0); a stripe adds its members' own.
struct StatsMember {
	uint32_t member = 0;
	std::string device;
	nvme::u128 hbmw = 0, mbmw = 0, mbe = 0;
	std::optional<double> waf;
};
struct StatsReply {
	nvme::u128 hbmw = 0, mbmw = 0, mbe = 0;
	std::optional<double> waf;
	std::optional<std::vector<StatsMember>> members;
	std::optional<TwinStats> twin;  // kvfdpd's live WAF twin, when it runs one
	// The drive's own per-handle relocations (Media Reallocated events of log 0x23) beside
	// kvfdpd's host bytes per handle, when kvfdpd reads them (docs/twin.md, Noisy handles).
	std::optional<std::vector<TwinHandle>> drive_handles;
};
void to_json(nlohmann::json &j, const StatsMember &v);
void from_json(const nlohmann::json &j, StatsMember &v);
void to_json(nlohmann::json &j, const StatsReply &v);
void from_json(const nlohmann::json &j, StatsReply &v);
// Whether a stats reply carries the three counters.
[[nodiscard]] bool has_fdp_counters(const nlohmann::json &j);
// mbmw / hbmw, empty when hbmw is 0.
[[nodiscard]] std::optional<double> lifetime_waf(nvme::u128 hbmw, nvme::u128 mbmw);

// metrics: the exposition text (proto/metrics.hpp).
struct MetricsReply {
	std::string text;
};
void to_json(nlohmann::json &j, const MetricsReply &v);
void from_json(const nlohmann::json &j, MetricsReply &v);

// reload: the policy generation now in force.
struct ReloadReply {
	uint64_t generation = 0;
};
void to_json(nlohmann::json &j, const ReloadReply &v);
void from_json(const nlohmann::json &j, ReloadReply &v);

// stop: the disk being stopped, whether forced, whether the removal is a TRY_STOP_DEV.
struct StopReply {
	std::string stopping;
	bool force = false;
	bool safe_stop = false;
};
void to_json(nlohmann::json &j, const StopReply &v);
void from_json(const nlohmann::json &j, StopReply &v);

// The reply data as T (from_json's lenient defaults for what it lacks).
template <class T> [[nodiscard]] T reply_as(const nlohmann::json &data)
{
	T v{};
	if (data.is_object())
		from_json(data, v);
	return v;
}

}  // namespace kvfdp::proto
