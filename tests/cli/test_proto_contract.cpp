// The kvfdpd <-> kvfdp contract (proto/): docs/control.md's reply documents against the
// structs in both directions, round trips, lenient reading, backend kinds. Links kvfdp_proto
// alone: the contract stands without the daemon.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proto/backend_kind.hpp"
#include "proto/control.hpp"
#include "proto/exit_codes.hpp"
#include "proto/files_reply.hpp"
#include "proto/policy_reply.hpp"
#include "proto/files_request.hpp"
#include "proto/health.hpp"
#include "proto/twin_window.hpp"

using namespace kvfdp::proto;
using nlohmann::json;

namespace {

std::string read_text(const char *path)
{
	std::ifstream f(path);
	REQUIRE_MESSAGE(f, "cannot read " << path);
	std::stringstream s;
	s << f.rdbuf();
	return s.str();
}

std::string read_doc()
{
	return read_text(KVFDP_CONTROL_DOC);
}

// The body of section "### `name`" (up to the next heading).
std::string section(const std::string &doc, const std::string &name)
{
	const std::string head = "### `" + name + "`";
	const size_t a = doc.find(head);
	REQUIRE_MESSAGE(a != std::string::npos, head);
	const size_t b = doc.find("\n#", a + head.size());
	return doc.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

// The section's example reply data: its ```json blocks and inline `{...}` objects, with the
// elisions ("...six entries...", ", ...") dropped; requests ("cmd") and errors left out.
std::vector<json> examples(const std::string &body)
{
	std::vector<std::string> texts;
	const std::regex block("```json\\n([\\s\\S]*?)```");
	for (auto it = std::sregex_iterator(body.begin(), body.end(), block);
	     it != std::sregex_iterator(); ++it)
		texts.push_back((*it)[1]);
	const std::regex inl("`(\\{\"[^`]*\\})`");
	for (auto it = std::sregex_iterator(body.begin(), body.end(), inl);
	     it != std::sregex_iterator(); ++it)
		texts.push_back((*it)[1]);
	std::vector<json> out;
	for (std::string t : texts) {
		t = std::regex_replace(t, std::regex(",\\s*\\.\\.\\.[a-z ]*\\.\\.\\."), "");
		t = std::regex_replace(t, std::regex(",\\s*\\.\\.\\."), "");
		json j = json::parse(t, nullptr, false);
		REQUIRE_MESSAGE(!j.is_discarded(), "docs/control.md example is not JSON: " << t);
		if (j.contains(kCmdKey) || (j.contains(kOkKey) && j[kOkKey] == false))
			continue;
		out.push_back(j.contains(kDataKey) ? j[kDataKey] : j);
	}
	return out;
}

// Every key of `have` is in `want` (same path), recursing through objects and arrays (the
// i-th element against the i-th, or the first when want has fewer).
void keys_within(const json &have, const json &want, const std::string &path,
		 const std::string &what)
{
	if (have.is_object()) {
		REQUIRE_MESSAGE(want.is_object(), path << " is an object in " << what << " only");
		for (auto it = have.begin(); it != have.end(); ++it) {
			const std::string key = path + "." + it.key();
			CHECK_MESSAGE(want.contains(it.key()), key << " is missing from " << what);
			if (want.contains(it.key()))
				keys_within(it.value(), want[it.key()], key, what);
		}
	} else if (have.is_array() && want.is_array() && !want.empty()) {
		for (size_t i = 0; i < have.size(); i++)
			keys_within(have[i], want[std::min(i, want.size() - 1)], path + "[]", what);
	}
}

template <class T>
void check_documented(const std::string &doc, const std::string &name,
		      bool every_written_key_documented)
{
	const auto ex = examples(section(doc, name));
	REQUIRE_MESSAGE(!ex.empty(), "docs/control.md `" << name << "` has no example reply");
	for (const json &d : ex) {
		const json back = reply_as<T>(d);
		keys_within(d, back, name,
			    "the struct's JSON");  // every documented key is read and written
		if (every_written_key_documented)
			keys_within(back, d, name, "docs/control.md");
	}
}

}  // namespace

TEST_CASE("proto: every key docs/control.md shows is in the reply structs, and the reverse")
{
	const std::string doc = read_doc();
	check_documented<StatusReply>(doc, "status", true);
	check_documented<RuhReply>(doc, "ruh", true);
	check_documented<StatsReply>(doc, "stats", true);
	check_documented<ReloadReply>(doc, "reload", true);
	check_documented<StopReply>(doc, "stop", true);
	check_documented<MetricsReply>(doc, "metrics", true);
	check_documented<FilesReply>(doc, "files", true);
	check_documented<PolicyReply>(doc, "policy", true);
	check_documented<TwinWindow>(doc, "twin_window", true);
	// The unknown-cmd line lists the commands as the daemon does.
	CHECK(doc.find("known: " + known_commands() + "`") != std::string::npos);
}

TEST_CASE("proto: a full status reply reads back to the same JSON")
{
	StatusReply s;
	s.daemon = {"0.1.0", 812,  41, "/etc/kvfdp/kvfdp.toml", "/run/kvfdp/kvfdpd.sock",
		    3,       true, ""};
	s.device.backend = "passthru";
	s.device.path = "/dev/ng0n1";
	s.device.nlb = 262144;
	s.device.stripe =
		StripeStatus{2,
			     524288,
			     131072,
			     "",
			     {{0, "/dev/ng0n1", 1, 4096, 131072, 524288, 8, 1048576, true}}};
	s.kernel = {"7.3.4", "0x68858", std::vector<std::string>{"USER_RECOVERY"}, ""};
	s.tagging = {true, "", {"bio_hint"}, "/sys/fs/bpf/kvfdp/ublkb0", false, "/mnt/kv"};
	s.health = Health{false, ""};
	s.classes = {{"short", 1, 64, 8388608, false, {}}};
	s.stale_tags = 2;
	s.io.writes = 300;
	s.io.copied_bytes = 0;
	s.data_path = StatusDataPath{"copy", "no zero copy"};
	s.recovery = {true, false, "live"};
	const json j = s;
	CHECK(json(reply_as<StatusReply>(j)) == j);
	CHECK(j["daemon"]["running"] == true);
	// kvfdp status without kvfdpd: running false, the socket and why, nothing else.
	StatusDaemon none;
	none.socket = "/run/kvfdp/kvfdpd.sock";
	none.running = false;
	none.reason = "no kvfdpd at it";
	CHECK(json(none) ==
	      json{{"running", false}, {"socket", none.socket}, {"reason", none.reason}});
	json marked = json{{"daemon", {{"pid", 812}}}};
	mark_daemon_running(marked);
	CHECK(marked["daemon"]["running"] == true);
	CHECK(marked["daemon"]["pid"] == 812);
	CHECK(j["device"]["stripe"]["devices"][0]["nruh"] == 8);

	RuhReply r;
	r.ruhss = {{0, 0, 0, 0, 256, 49152, 12, std::vector<std::string>{"not_set", "none"}}};
	r.classes = {{"not_set", 0, 12, 49152, true, uint16_t{0}},
		     {"extreme", 9, 0, 0, true, std::nullopt}};
	r.stripe_bytes = 524288;
	r.members = std::vector<RuhMember>{
		{1, "/dev/ng1n1", 1, 4096, {{0, 0, 0, 0, 10, 4096, {}, {}}}}};
	const json rj = r;
	CHECK(rj["nruhsd"] == 1);
	CHECK(rj["classes"][1]["pid"].is_null());
	CHECK_FALSE(rj["members"][0]["ruhss"][0].contains("writes"));
	CHECK(json(reply_as<RuhReply>(rj)) == rj);

	StatsReply st{(static_cast<kvfdp::nvme::u128>(1) << 64) + 5,
		      8,
		      0,
		      lifetime_waf(2, 3),
		      std::nullopt,
		      std::nullopt,
		      std::nullopt};
	const json sj = st;
	CHECK(sj["hbmw"] == "18446744073709551621");  // past 64 bits: a decimal string
	CHECK(sj["waf"].get<double>() == doctest::Approx(1.5));
	CHECK(json(reply_as<StatsReply>(sj)) == sj);
	CHECK(json(StatsReply{})["waf"].is_null());
	CHECK_FALSE(json(StatsReply{}).contains(kTwinKey));

	// The live twin's object: a WAF is null until written; it reads back the same.
	StatsReply tw;
	tw.twin = TwinStats{0.015625,
			    67108864,
			    16777216,
			    262144,
			    5000,
			    3,
			    0,
			    1073741824,
			    {1.02, 1095216660, 0},
			    {std::nullopt, 1481763717, 0},
			    386547057,
			    {}};
	const json twj = tw;
	CHECK(twj[kTwinKey]["none"]["waf"].is_null());
	CHECK(twj[kTwinKey]["placed"]["media_bytes"] == 1095216660);
	CHECK(twj[kTwinKey]["handles"] == json::array());
	tw.twin->handles = {{0, 805306368, 20132659}, {3, 268435456, 0}};
	const json twh = tw;
	CHECK(twh[kTwinKey]["handles"][1] ==
	      json{{"handle", 3}, {"host_bytes", 268435456}, {"relocated_bytes", 0}});
	CHECK(json(reply_as<StatsReply>(twh)) == twh);
	CHECK_FALSE(reply_as<StatsReply>(json{{kTwinKey, 5}}).twin);
	// An older kvfdpd's twin (no handles), or a mistyped array: none, nothing thrown.
	CHECK(reply_as<StatsReply>(json{{kTwinKey, {{"rate", 1}}}}).twin->handles.empty());
	CHECK(reply_as<StatsReply>(json{{kTwinKey, {{"handles", 5}}}}).twin->handles.empty());
	const auto odd = reply_as<StatsReply>(
		json{{kTwinKey, {{"handles", {7, {{"handle", 2}, {"host_bytes", -1}}}}}}});
	REQUIRE(odd.twin->handles.size() == 1);
	CHECK(odd.twin->handles[0].handle == 2);
	CHECK(odd.twin->handles[0].host_bytes == 0);

	// The drive's own per-handle relocations: absent unless kvfdpd read them; read back the same.
	CHECK_FALSE(json(StatsReply{}).contains(kDriveHandlesKey));
	StatsReply dr;
	dr.drive_handles = std::vector<TwinHandle>{{0, 805306368, 0}, {1, 268435456, 106258176}};
	const json drj = dr;
	CHECK(drj[kDriveHandlesKey][1] ==
	      json{{"handle", 1}, {"host_bytes", 268435456}, {"relocated_bytes", 106258176}});
	CHECK(json(reply_as<StatsReply>(drj)) == drj);
	CHECK_FALSE(reply_as<StatsReply>(json{{kDriveHandlesKey, 5}}).drive_handles);
}

TEST_CASE("proto: replies are read leniently: missing or mistyped keys keep their defaults")
{
	const auto s = reply_as<StatusReply>(
		json{{"device", 5}, {"stale_tags", -1}, {"daemon", {{"pid", "x"}}}});
	CHECK(s.device.path.empty());
	CHECK(s.stale_tags == 0);
	CHECK(s.daemon.pid == 0);
	CHECK_FALSE(s.data_path);
	CHECK(reply_as<RuhReply>(json::array()).ruhss.empty());
	const auto r = reply_as<RuhReply>(json{{"ruhss", {{{"pid", 3}}, {{"index", 7}}}}});
	REQUIRE(r.ruhss.size() == 2);
	CHECK(r.ruhss[0].index == 0);  // numbered by place when absent
	CHECK(r.ruhss[1].index == 7);
	CHECK_FALSE(has_ruh_rows(json::object()));
	CHECK_FALSE(has_fdp_counters(json{{"hbmw", 1}}));

	// A health or a class row of the wrong shape: defaults, nothing thrown.
	for (const json &state : {json(nullptr), json(5), json::array(), json::object()}) {
		const json bad = {{"health", {{"state", state}, {"why", 7}}}, {"classes", {3}}};
		const auto h = reply_as<StatusReply>(bad);
		REQUIRE(h.health);
		CHECK_FALSE(h.health->degraded);
		CHECK(h.health->why.empty());
		CHECK_FALSE(health_from_status(bad).degraded);
		REQUIRE(h.classes.size() == 1);  // a row for every element of "classes"
		CHECK(h.classes[0].cls.empty());
		CHECK_FALSE(h.classes[0].with_pid);
	}
	CHECK(health_from_status(json{{"tagging", {{"active", "no"}, {"reason", 1}}}}).degraded);
	// u128 counters: a number or a decimal string; anything else 0.
	const auto st = reply_as<StatsReply>(
		json{{"hbmw", "18446744073709551621"}, {"mbmw", -3}, {"mbe", "1x"}, {"waf", "1"}});
	CHECK(st.hbmw == (static_cast<kvfdp::nvme::u128>(1) << 64) + 5);
	CHECK(st.mbmw == 0);
	CHECK(st.mbe == 0);
	CHECK_FALSE(st.waf);
	// A stripe member without "member" is numbered by its place, as a ruhss row by index.
	const auto members =
		reply_as<RuhReply>(json{{"members", {{{"device", "a"}}, 4, {{"member", 9}}}}});
	REQUIRE(members.members);
	REQUIRE(members.members->size() == 3);
	CHECK((*members.members)[0].member == 0);
	CHECK((*members.members)[1].member == 1);
	CHECK((*members.members)[2].member == 9);

	StopRequest stop;
	std::string err;
	CHECK(parse_stop_request(json{{"cmd", "stop"}}, stop, err));
	CHECK_FALSE(stop.force);
	CHECK_FALSE(parse_stop_request(json{{"force", "yes"}}, stop, err));
	CHECK(err == "stop: \"force\" must be true or false");
}

TEST_CASE("proto: backend kinds: one table of names and what each can do")
{
	for (const BackendCaps &c : backends()) {
		REQUIRE(parse_backend(c.name));
		CHECK(*parse_backend(c.name) == c.kind);
		CHECK(std::string(backend_name(c.kind)) == c.name);
	}
	CHECK_FALSE(parse_backend("nvme"));
	CHECK(backend_list() == "passthru, streams, model or file");
	CHECK(backend_list(true) == "passthru or model");
	CHECK(backend_by_file("model"));
	CHECK(backend_by_file("file"));
	CHECK_FALSE(backend_by_file("passthru"));
	CHECK(backend_passthru_logs("passthru"));
	CHECK_FALSE(backend_passthru_logs("streams"));
	CHECK_FALSE(backend_passthru_logs("bogus"));
	CHECK(backend_zero_copy("passthru"));
	CHECK_FALSE(backend_zero_copy("model"));
}

TEST_CASE("proto: the files request the CLI writes is the one kvfdpd parses")
{
	FilesQuery q;
	q.limit = 20;
	q.order = FilesQuery::Order::bytes;
	q.cls = 2;
	q.live_only = true;
	const json j = q;
	CHECK(j == json{{"limit", 20}, {"sort", "bytes"}, {"class", "short"}, {"live", true}});
	FilesQuery back;
	std::string err;
	REQUIRE(parse_files_query(j, back, err));
	CHECK(back.limit == 20);
	CHECK(back.order == FilesQuery::Order::bytes);
	CHECK(back.cls == 2);
	CHECK(back.live_only);
	CHECK(json(FilesQuery{}) == json{{"limit", 1000}, {"sort", "newest"}});
	CHECK_FALSE(parse_files_query(json{{"sort", "size"}}, back, err));
	CHECK(err == "files: 'sort' must be \"newest\" or \"bytes\"");
}

TEST_CASE("proto: a files reply reads back to the same JSON; without the tagger only the reason")
{
	FilesReply f;
	f.live = 16;
	f.deleted = 4;
	f.matched = 20;
	f.limit = 100;
	FileRow live{"259:2",
		     14,
		     "short",
		     "hint",
		     4198400,
		     1796216134.25,
		     {},
		     {},
		     339,
		     "writer",
		     1234,
		     1234,
		     "/kv.slice/engine-a.service",
		     {},
		     {},
		     {}};
	FileRow dead = live;
	dead.death = 1796216137.75;
	dead.lifetime_s = 3.5;
	dead.writer.reset();
	f.files = {live, dead};
	f.lifetimes = std::vector<ClassLifetime>{{"not_set", 0, {}}, {"short", 4, 3.598}};
	const json j = f;
	CHECK(j["files"][0]["death"].is_null());
	CHECK_FALSE(j["files"][1].contains("writer"));
	CHECK_FALSE(j["files"][0].contains("state"));  // the CLI's addition, not kvfdpd's
	CHECK(j["lifetimes"][0]["mean_s"].is_null());
	CHECK(json(reply_as<FilesReply>(j)) == j);

	FilesReply none;
	none.available = false;
	none.reason = "the BPF tagger is not active (x): see kvfdp status";
	CHECK(json(none) ==
	      json{{"available", false}, {"reason", *none.reason}, {"files", json::array()}});
	// Lenient: rows that are not objects are skipped, a missing "available" is true.
	const auto odd =
		reply_as<FilesReply>(json{{"files", {1, {{"ino", 7}}, "x"}}, {"matched", -1}});
	CHECK(odd.available);
	CHECK_FALSE(odd.matched);
	REQUIRE(odd.files.size() == 1);
	CHECK(odd.files[0].ino == 7);
	CHECK_FALSE(odd.files[0].birth);
}

TEST_CASE("proto: a policy reply reads back to the same JSON; policy check's document is brief")
{
	PolicyReply p;
	p.config = "/etc/kvfdp/kvfdp.toml";
	p.generation = 2;
	p.loaded_at = 1764668400;
	p.nruh = 8;
	p.map = {{"not_set", 0, uint16_t{0}, {}}, {"extreme", 9, {}, {}}};
	p.rules = {{"/mnt/kv/prefix", "extreme", {}}};
	p.writers = std::vector<PolicyWriter>{{"logs", {}, "/mnt/kv/logs", uint16_t{3}}};
	p.placement = "learned";
	p.watch = {"/dev/ublkb0", "/mnt/kv"};
	LearnedPolicy l;
	l.groups = 2;
	l.grouping = "by_class";
	l.handles_used = {0, 1, 3};
	l.keys = {{202, "/staging", "not_set", 1, 1, false, 8388608, 2.5, 0.8, 4194304, 1073741824,
		   1069547520},
		  {101, {}, "short", 0, 0, true, 0, 0, 0.2, 0, 0, 0}};
	p.learned = l;
	const json j = p;
	CHECK(j["map"][1]["pid"].is_null());
	CHECK(j["writers"][0]["cgroup"].is_null());
	CHECK(j["learned"]["keys"][1]["writer"].is_null());
	CHECK(j["learned"]["handles_used"] == json{0, 1, 3});
	CHECK(j["learned"]["grouping"] == "by_class");
	CHECK_FALSE(j.contains("valid"));  // the CLI's FILE document only
	CHECK(json(reply_as<PolicyReply>(j)) == j);

	// A FILE the CLI parsed without a device: no handle count (null), rules with their line.
	PolicyReply f;
	f.config = "k.toml";
	f.valid = true;
	f.checked_against_device = false;
	f.map = {{"long", 3, {}, "config"}};
	f.rules = {{"/mnt/kv/prefix", "extreme", 4}};
	const json fj = f;
	CHECK(fj["nruh"].is_null());
	CHECK(fj["rules"][0]["line"] == 4);
	CHECK(fj["map"][0]["from"] == "config");
	CHECK_FALSE(fj.contains("writers"));
	CHECK(json(reply_as<PolicyReply>(fj)) == fj);
	f.brief = true;
	CHECK(json(f) ==
	      json{{"config", "k.toml"}, {"valid", true}, {"checked_against_device", false}});
	PolicyReply bad;
	bad.config = "k.toml";
	bad.valid = false;
	bad.error = "k.toml:2: placement.forever: unknown";
	bad.brief = true;
	CHECK(json(bad) == json{{"config", "k.toml"}, {"valid", false}, {"error", *bad.error}});
	// Lenient: a learned part of the wrong type is left out; handles that are not numbers skipped.
	const auto odd = reply_as<PolicyReply>(json{{"learned", 3}, {"nruh", "8"}});
	CHECK_FALSE(odd.learned);
	CHECK_FALSE(odd.nruh);
	CHECK(reply_as<LearnedPolicy>(json{{"handles_used", {1, "x", -1, 2}}}).handles_used ==
	      std::vector<uint16_t>{1, 2});
}

TEST_CASE("proto: a twin window reads back to the same JSON; a bad record is left out, not thrown")
{
	TwinWindow w;
	w.rate = 0.015625;
	w.model = {16777216, 262144, 512, 4096, 8, 0.07, "cost-benefit"};
	w.capacity = 209715;
	w.total = 300000;
	w.dropped = 2;
	w.span_ms = 61000;
	w.age_ms = 12;
	w.records = {{1ull << 33, 8, 3, TwinWindowOp::write},
		     {64, 4294967295u, 0, TwinWindowOp::discard},
		     {7, 1, 0, TwinWindowOp::write_zeroes}};
	const json j = w;
	CHECK(j["records"][0] == json::array({1ull << 33, 8, 3, 1}));
	const TwinWindow back = reply_as<TwinWindow>(j);
	CHECK(json(back) == j);
	CHECK(back.model.gc == "cost-benefit");
	CHECK(back.records[1].nlb == 4294967295u);
	// Records that are not [lba, nlb, handle, op] with a known op are dropped one by one.
	json bad = j;
	bad["records"] =
		json::array({json::array({1, 2, 3, 9}), json::array({1, 2, 3}), "x",
			     json::array({-1, 2, 3, 1}), json::array({1, 4294967296ull, 0, 1}),
			     json::array({5, 6, 70000, 1}), json::array({5, 6, 7, 2})});
	const TwinWindow some = reply_as<TwinWindow>(bad);
	REQUIRE(some.records.size() == 1);
	CHECK(some.records[0].lba == 5);
	CHECK(some.records[0].op == TwinWindowOp::discard);
	CHECK(reply_as<TwinWindow>(json{{"records", 5}}).records.empty());
	CHECK(reply_as<TwinWindow>(json{{"rate", "x"}}).rate == 0);
}

TEST_CASE("proto: a twin_window request's from and max; a bad one is refused in one line")
{
	TwinWindowRequest r;
	std::string err;
	REQUIRE(parse_twin_window_request(json::object(), r, err));
	CHECK_FALSE(r.from);
	CHECK(r.max == kTwinWindowPage);
	REQUIRE(parse_twin_window_request(json(TwinWindowRequest{5, 10}), r, err));
	CHECK(r.from == 5u);
	CHECK(r.max == 10);
	for (const json &max : {json(0), json(kTwinWindowPage + 1), json(1ull << 40)}) {
		REQUIRE(parse_twin_window_request(json{{"max", max}}, r, err));
		CHECK(r.max == kTwinWindowPage);
	}
	for (const char *key : {"from", "max"})
		for (const json &bad : {json(-1), json("x"), json(1.5), json::array()}) {
			CHECK_FALSE(parse_twin_window_request(json{{key, bad}}, r, err));
			CHECK(err == std::string("twin_window.") + key +
					     " must be a non-negative integer");
		}
	// A full page of the widest records fits one reply line.
	TwinWindow w;
	w.first = UINT64_MAX - kTwinWindowPage;
	w.next = w.total = UINT64_MAX;
	w.records.assign(kTwinWindowPage,
			 {UINT64_MAX, UINT32_MAX, UINT16_MAX, TwinWindowOp::write_zeroes});
	CHECK(json{{kOkKey, true}, {kDataKey, w}}.dump().size() + 1 < kMaxReplyBytes);
	const TwinWindow back = reply_as<TwinWindow>(json(w));
	CHECK(back.first == w.first);
	CHECK(back.next == w.next);
}

TEST_CASE("proto: stop and reload change state; the other requests do not")
{
	CHECK(changes_state(cmd::kStop));
	CHECK(changes_state(cmd::kReload));
	for (const char *c : {cmd::kStatus, cmd::kRuh, cmd::kFiles, cmd::kPolicy, cmd::kStats,
			      cmd::kMetrics, cmd::kTwinWindow, "stopp", ""})
		CHECK_FALSE(changes_state(c));
	CHECK(std::string(kAdminGroup) == "kvfdp-admin");
	CHECK(std::string(kClientGroup) == "kvfdp");
}

TEST_CASE("proto: kvfdpd.service serves the default socket and restarts by kvfdpd's exit codes")
{
	const std::string unit = read_text(KVFDP_UNIT_FILE);
	CHECK(unit.find(std::string(" --socket ") + kDefaultSocket + " ") != std::string::npos);
	CHECK(unit.find("\nRestartPreventExitStatus=" + std::to_string(kDaemonExitConfig) + " " +
			std::to_string(kDaemonExitUsage) + "\n") != std::string::npos);
	CHECK(unit.find("\nRestartForceExitStatus=" + std::to_string(kDaemonExitRuntime) + "\n") !=
	      std::string::npos);
}
