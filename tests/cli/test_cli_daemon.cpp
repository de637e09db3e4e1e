// The daemon path of the CLI, tested against a fake kvfdpd: a real Unix socket served from
// this test process with canned JSON replies in docs/control.md's shapes. It tests the CLI's
// client and rendering, not kvfdpd (the VM scenario cli_metrics runs the real daemon).
#include <doctest/doctest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "proto/metrics.hpp"
#include "tests/cli/cli_test_util.hpp"
#include "cli/control_client.hpp"

using namespace kvfdp::cli;
using namespace kvfdp::cli::test;
using nlohmann::json;

namespace {

// Serves one JSON reply line per request line; replies are looked up by "cmd".
class FakeDaemon {
public:
	explicit FakeDaemon(std::map<std::string, std::string> replies)
	    : replies_(std::move(replies))
	{
		path_ = "/tmp/kvfdp-cli-fake-" + std::to_string(::getpid()) + "-" +
			std::to_string(counter_++) + ".sock";
		::unlink(path_.c_str());
		fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sockaddr_un a{};
		a.sun_family = AF_UNIX;
		std::strncpy(a.sun_path, path_.c_str(), sizeof a.sun_path - 1);
		REQUIRE(::bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
		REQUIRE(::listen(fd_, 8) == 0);
		REQUIRE(::pipe(stop_) == 0);
		thread_ = std::thread([this] { serve(); });
	}
	~FakeDaemon()
	{
		char c = 1;
		(void)!::write(stop_[1], &c, 1);
		thread_.join();
		::close(fd_);
		::close(stop_[0]);
		::close(stop_[1]);
		::unlink(path_.c_str());
	}
	const std::string &path() const { return path_; }
	std::vector<std::string> seen()
	{
		std::lock_guard<std::mutex> l(mu_);
		return seen_;
	}

private:
	void serve()
	{
		for (;;) {
			pollfd p[2] = {{fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
			if (::poll(p, 2, -1) < 0)
				continue;
			if (p[1].revents)
				return;
			int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
			if (c < 0)
				continue;
			std::string line;
			char buf[4096];
			while (line.find('\n') == std::string::npos) {
				ssize_t n = ::read(c, buf, sizeof buf);
				if (n <= 0)
					break;
				line.append(buf, static_cast<size_t>(n));
			}
			auto req = json::parse(line.substr(0, line.find('\n')), nullptr, false);
			std::string cmd = req.is_object() ? req.value("cmd", std::string()) : "";
			{
				std::lock_guard<std::mutex> l(mu_);
				seen_.push_back(line.substr(0, line.find('\n')));
			}
			auto it = replies_.find(cmd);
			std::string reply =
				it != replies_.end()
					? it->second
					: R"({"ok":false,"error":"unknown cmd ')" + cmd + "'\"}";
			// Canned replies are written readably; the protocol wants one line.
			auto canned = json::parse(reply, nullptr, false);
			if (!canned.is_discarded() && reply != "<hang-up>")
				reply = canned.dump();
			if (reply != "<hang-up>") {
				reply += "\n";
				(void)!::write(c, reply.data(), reply.size());
			}
			::close(c);
		}
	}

	std::map<std::string, std::string> replies_;
	std::string path_;
	int fd_ = -1;
	int stop_[2] = {-1, -1};
	std::thread thread_;
	std::mutex mu_;
	std::vector<std::string> seen_;
	static inline std::atomic<int> counter_{0};
};

const char *kStatus = R"({"ok":true,"data":{
 "daemon":{"version":"0.1.0","pid":812,"uptime_s":41,"config":"/etc/kvfdp/kvfdp.toml","socket":"/run/kvfdp/kvfdpd.sock","policy_generation":1},
 "device":{"ublk_id":0,"ublk_path":"/dev/ublkb0","backend":"passthru","path":"/dev/ng0n1","nsid":1,"lba_size":4096,"nlb":262144,"size_bytes":1073741824,"max_transfer":524288,"fdp_enabled":true,"nruh":4,"nrg":1,"ru_size":1048576,"queues":1,"depth":64,"volatile_cache":true,"fua":false},
 "kernel":{"release":"6.12.57+deb12-cloud-amd64","ublk_flags":"0x5e"},
 "tagging":{"active":true,"reason":"","sources":["bio_hint","inode_policy","inode_hint"],"watch_dir":"/mnt/kv"},
 "classes":[{"class":"not_set","handle":0,"writes":12,"bytes":49152},{"class":"none","handle":0,"writes":0,"bytes":0},{"class":"short","handle":1,"writes":64,"bytes":8388608},{"class":"medium","handle":1,"writes":0,"bytes":0},{"class":"long","handle":2,"writes":32,"bytes":4194304},{"class":"extreme","handle":3,"writes":0,"bytes":0}],
 "stale_tags":2,
 "io":{"reads":10,"read_bytes":40960,"writes":108,"write_bytes":12632064,"flushes":4,"discards":3,"discard_bytes":8388608,"write_zeroes":0,"write_zeroes_bytes":0,"errors":0},
 "recovery":{"enabled":true,"recovered":false,"state":"live"}}})";

const char *kRuh = R"({"ok":true,"data":{"nruhsd":4,"ruhss":[
 {"index":0,"pid":0,"ruhid":0,"earutr":0,"ruamw":244,"bytes":49152,"writes":12,"classes":["not_set","none"]},
 {"index":1,"pid":1,"ruhid":1,"earutr":0,"ruamw":208,"bytes":8388608,"writes":64,"classes":["short","medium"]},
 {"index":2,"pid":2,"ruhid":2,"earutr":0,"ruamw":0,"bytes":4194304,"writes":32,"classes":["long"]},
 {"index":3,"pid":3,"ruhid":3,"earutr":0,"ruamw":256,"bytes":0,"writes":0,"classes":["extreme"]}],
 "classes":[]}})";

const char *kStats = R"({"ok":true,"data":{"hbmw":12632064,"mbmw":12632064,"mbe":0,"waf":1.0}})";

const char *kFiles = R"({"ok":true,"data":{"available":true,"matched":3,"files":[
 {"dev":"259:1","ino":132,"class":"long","writer":"/kv.slice/engine-a.service","bytes":8388608,"birth":1764668400.0,"death":null,"lifetime_s":null,"path":"/mnt/kv/prefix/chunk-0001.bin"},
 {"dev":"259:1","ino":131,"class":"short","writer":"staging","bytes":4194304,"birth":1764668400.125,"death":1764668460.5,"lifetime_s":60.375},
 {"dev":"259:1","ino":133,"class":"short","bytes":1048576,"birth":1764668410.0,"death":null,"lifetime_s":null}]}})";

const char *kMetrics =
	R"({"ok":true,"data":{"text":"# HELP kvfdp_class_bytes_total Bytes written per class.\n# TYPE kvfdp_class_bytes_total counter\nkvfdp_class_bytes_total{class=\"short\"} 8388608\n# HELP kvfdp_stale_tags_total Stale tags.\n# TYPE kvfdp_stale_tags_total counter\nkvfdp_stale_tags_total 2\n"}})";

const char *kPolicy =
	R"({"ok":true,"data":{"config":"/etc/kvfdp/kvfdp.toml","generation":2,"nruh":4,
 "map":[{"class":"not_set","handle":0,"pid":0}],"rules":[],"placement":"learned",
 "writers":[{"name":"logs","cgroup":null,"dir":"/mnt/kv/logs","handle":3}],
 "watch":{"disk":"/dev/ublkb0","dir":""},
 "learned":{"mode":"learned","groups":2,"handles_used":[0,1,3],"key_count":3,"max_keys":4096,"retired_keys":2,"overflow_bytes":0,"clock_bytes":1073741824,"ruh_updates":1,"ruh_update_refused":0,
  "keys":[
   {"writer_id":202,"writer":"/staging.slice","class":"not_set","group":1,"handle":1,"pinned":false,"lifetime_bytes":8388608,"lifetime_s":2.5,"write_share":0.8,"live_bytes":4194304},
   {"writer_id":101,"writer":"/engine.slice","class":"not_set","group":0,"handle":0,"pinned":false,"lifetime_bytes":671088640,"lifetime_s":200,"write_share":0.19,"live_bytes":134217728},
   {"writer_id":2147483649,"writer":"logs","class":"not_set","group":0,"handle":3,"pinned":true,"lifetime_bytes":0,"lifetime_s":0,"write_share":0.01,"live_bytes":1048576}]}}})";

std::map<std::string, std::string> all_replies()
{
	return {{"status", kStatus}, {"ruh", kRuh},       {"stats", kStats},
		{"files", kFiles},   {"policy", kPolicy}, {"metrics", kMetrics}};
}

Ran ask(FakeDaemon &d, std::vector<std::string> args)
{
	// A root with nothing in it: the local kernel probe reads the same on every host.
	args.insert(args.end(), {"--socket", d.path(), "--width", "100", "--probe-root",
				 "/nonexistent-kvfdp-root"});
	return run_cli(args);
}

}  // namespace

TEST_CASE("cli: status through the fake daemon shows classes, stale tags and recovery")
{
	FakeDaemon d(all_replies());
	Ran r = ask(d, {"status"});
	INFO(r.err);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(golden_diff("status_daemon.txt", r.out) == "");
	Ran j = ask(d, {"status", "-o", "json"});
	auto doc = json::parse(j.out);
	CHECK(doc["stale_tags"] == 2);
	CHECK(doc["source"] == "daemon");
	CHECK(doc["kernel"]["release"] == "6.12.57+deb12-cloud-amd64");  // the daemon's wins
	CHECK(doc["kernel"].contains("btf"));                            // plus the local probe
	CHECK(d.seen().front() == R"({"cmd":"status"})");
}

TEST_CASE(
	"cli: status of a kvfdpd without its tagger says DEGRADED and why on its first line, and in -o json")
{
	std::string st = kStatus;
	const std::string on = R"("tagging":{"active":true,"reason":"",)";
	REQUIRE(st.find(on) != std::string::npos);
	st.replace(
		st.find(on), on.size(),
		R"("tagging":{"active":false,"reason":"tagger: load the BPF programs: Invalid argument: program kvfdp_rq_issue",)");
	FakeDaemon d({{"status", st}});
	Ran r = ask(d, {"status"});
	INFO(r.err);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.rfind(
		      "DEGRADED: the BPF tagger is not active (tagger: load the BPF programs: Invalid argument: program "
		      "kvfdp_rq_issue): every write goes to the default handle, unplaced\ndaemon: ",
		      0) == 0);
	CHECK(r.out.find("INACTIVE (tagger: load the BPF programs") != std::string::npos);
	auto doc = json::parse(ask(d, {"status", "-o", "json"}).out);
	CHECK(doc["health"]["state"] == "degraded");
	CHECK(doc["health"]["why"].get<std::string>().find("program kvfdp_rq_issue") !=
	      std::string::npos);
	// A placing kvfdpd: no such line, and "ok".
	FakeDaemon good(all_replies());
	CHECK(ask(good, {"status"}).out.rfind("daemon: ", 0) == 0);
	CHECK(json::parse(ask(good, {"status", "-o", "json"}).out)["health"] ==
	      json{{"state", "ok"}, {"why", ""}});
}

TEST_CASE(
	"cli: status names the data path, zero copy or copy with the daemon's note, and the bytes copied")
{
	auto with_path = [](const std::string &mode, const std::string &note, uint64_t copied) {
		std::string st = kStatus;
		const std::string io_end = R"("errors":0})";
		st.replace(st.find(io_end), io_end.size(),
			   R"("errors":0,"copied_bytes":)" + std::to_string(copied) + "}");
		const std::string rec = R"("recovery":)";
		st.insert(st.find(rec),
			  R"("data_path":{"mode":")" + mode + R"(","note":")" + note + R"("},)");
		return st;
	};
	FakeDaemon zc({{"status", with_path("zero-copy", "", 0)}});
	auto wide = [](FakeDaemon &d) {
		return run_cli({"status", "--socket", d.path(), "--width", "200", "--probe-root",
				"/nonexistent-kvfdp-root"});
	};
	Ran r = wide(zc);
	INFO(r.err);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.find(
		      "data path:   zero copy: requests go to the device from their own pages (UBLK_F_AUTO_BUF_REG)") !=
	      std::string::npos);
	CHECK(r.out.find("0 errors, 0 B copied") != std::string::npos);
	FakeDaemon copy(
		{{"status",
		  with_path("copy", "this ublk driver lacks UBLK_F_AUTO_BUF_REG (Linux 6.16+)",
			    12673024)}});
	r = wide(copy);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.find(
		      "data path:   copy: each request is copied through kvfdpd's buffers (this ublk driver lacks "
		      "UBLK_F_AUTO_BUF_REG (Linux 6.16+))") != std::string::npos);
	CHECK(r.out.find("12.09 MiB copied") != std::string::npos);
	// A daemon from before the data path: no line, no error.
	FakeDaemon old(std::map<std::string, std::string>{{"status", kStatus}});
	r = ask(old, {"status"});
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.find("data path") == std::string::npos);
}

TEST_CASE("cli: ruh through the fake daemon adds kvfdpd's bytes per handle")
{
	FakeDaemon d(all_replies());
	Ran r = ask(d, {"ruh"});
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(golden_diff("ruh_daemon.txt", r.out) == "");
	auto doc = json::parse(ask(d, {"ruh", "-o", "json"}).out);
	CHECK(doc["source"] == "daemon");
	CHECK(doc["lba_size"] == 4096);
	CHECK(doc["ruhss"][1]["bytes_written"] == 8388608);
	CHECK(doc["ruhss"][1]["ruamw_bytes"] == 208u * 4096u);
}

// A striped kvfdpd's replies (two members): the totals as before plus each member's own.
const char *kStripeRuh = R"({"ok":true,"data":{"nruhsd":2,"stripe_bytes":524288,"ruhss":[
 {"index":0,"pid":0,"ruhid":0,"earutr":0,"ruamw":400,"bytes":73728,"writes":3,"classes":["not_set","none"]},
 {"index":1,"pid":1,"ruhid":1,"earutr":0,"ruamw":300,"bytes":851968,"writes":2,"classes":["short"]}],
 "classes":[],
 "members":[
  {"member":0,"device":"/dev/ng0n1","nsid":1,"nruhsd":2,"bytes":458752,"ruhss":[
   {"index":0,"pid":0,"ruhid":0,"earutr":0,"ruamw":200,"bytes":32768},{"index":1,"pid":1,"ruhid":1,"earutr":0,"ruamw":152,"bytes":425984}]},
  {"member":1,"device":"/dev/ng1n1","nsid":1,"nruhsd":2,"bytes":466944,"ruhss":[
   {"index":0,"pid":0,"ruhid":0,"earutr":0,"ruamw":200,"bytes":40960},{"index":1,"pid":1,"ruhid":1,"earutr":0,"ruamw":148,"bytes":425984}]}]}})";
const char *kStripeStats =
	R"({"ok":true,"data":{"hbmw":925696,"mbmw":925696,"mbe":0,"waf":1.0,"members":[
 {"member":0,"device":"/dev/ng0n1","hbmw":458752,"mbmw":458752,"mbe":0,"waf":1.0},
 {"member":1,"device":"/dev/ng1n1","hbmw":466944,"mbmw":933888,"mbe":0,"waf":2.0}]}})";

TEST_CASE(
	"cli: a striped kvfdpd: status lists the members and stripe size, ruh and stats each member and the total")
{
	std::string st = kStatus;
	const std::string fua = R"("fua":false})";
	st.replace(
		st.find(fua), fua.size(),
		R"("fua":false,"stripe":{"members":2,"stripe_bytes":524288,"member_nlb":131072,"note":"","devices":[)"
		R"({"member":0,"path":"/dev/ng0n1","nsid":1,"lba_size":4096,"nlb":131072,"max_transfer":524288,"nruh":2,"ru_size":1048576,"fdp_enabled":true},)"
		R"({"member":1,"path":"/dev/ng1n1","nsid":1,"lba_size":4096,"nlb":131072,"max_transfer":524288,"nruh":2,"ru_size":1048576,"fdp_enabled":true}]}})");
	FakeDaemon d({{"status", st}, {"ruh", kStripeRuh}, {"stats", kStripeStats}});
	auto wide = [&d](std::vector<std::string> a) {
		a.insert(a.end(), {"--socket", d.path(), "--width", "200", "--probe-root",
				   "/nonexistent-kvfdp-root"});
		return run_cli(a);
	};
	Ran r = wide({"status"});
	INFO(r.out);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.find(
		      "stripe:      2 members, stripe size 512.00 KiB, 512.00 MiB used on each") !=
	      std::string::npos);
	CHECK(r.out.find("member 1:    /dev/ng1n1, nsid 1, 512.00 MiB, 2 handles, FDP enabled") !=
	      std::string::npos);
	const size_t row = r.out.find("device:");
	REQUIRE(row != std::string::npos);
	const std::string device_row = r.out.substr(row, r.out.find('\n', row) - row);
	CHECK_MESSAGE(device_row.find("nsid") == std::string::npos,
		      "a stripe's device row names no nsid: " << device_row);

	r = wide({"ruh"});
	INFO(r.out);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.find("total of 2 members") != std::string::npos);
	CHECK(r.out.find("member 0: /dev/ng0n1, 448.00 KiB written through kvfdpd") !=
	      std::string::npos);
	CHECK(r.out.find("member 1: /dev/ng1n1, 456.00 KiB written through kvfdpd") !=
	      std::string::npos);
	CHECK(r.out.find("a stripe of 2 members, unit 512.00 KiB") != std::string::npos);
	auto doc = json::parse(wide({"ruh", "-o", "json"}).out);
	CHECK(doc["stripe_bytes"] == 524288);
	REQUIRE(doc["members"].size() == 2);
	CHECK(doc["members"][1]["device"] == "/dev/ng1n1");
	CHECK(doc["members"][1]["bytes_written"] == 466944);
	CHECK(doc["members"][1]["ruhss"][1]["ruamw"] == 148);
	CHECK(doc["members"][1]["ruhss"][1]["bytes_written"] == 425984);
	CHECK(doc["members"][1]["ruhss"][1]["ruamw_bytes"] == 148 * 4096);
	CHECK(doc["ruhss"][1]["bytes_written"] == 851968);

	r = wide({"stats"});
	INFO(r.out);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.find("per member (the totals above are their sums):") != std::string::npos);
	CHECK(r.out.find("/dev/ng1n1") != std::string::npos);
	doc = json::parse(wide({"stats", "-o", "json"}).out);
	CHECK(doc["hbmw"] == 925696);
	REQUIRE(doc["members"].size() == 2);
	CHECK(doc["members"][1]["hbmw"] == 466944);
	CHECK(doc["members"][1]["mbmw"] == 933888);
	CHECK(doc["members"][1]["device"] == "/dev/ng1n1");
	CHECK(doc["members"][1]["lifetime"].contains("waf"));
	// One namespace: no member keys.
	FakeDaemon one(all_replies());
	CHECK(!json::parse(ask(one, {"ruh", "-o", "json"}).out).contains("members"));
	CHECK(!json::parse(ask(one, {"stats", "-o", "json"}).out).contains("members"));
}

TEST_CASE(
	"cli: files asks kvfdpd to rank by bytes and filter over all files; shows writer, age or lifetime")
{
	FakeDaemon d(all_replies());
	Ran r = ask(d, {"files", "--now", "1764668500"});
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(golden_diff("files_daemon.txt", r.out) == "");
	const json asked = json::parse(d.seen().back());
	CHECK(asked["cmd"] == "files");
	CHECK(asked["sort"] == "bytes");
	CHECK(asked["limit"] == 20);
	CHECK_FALSE(asked.contains("class"));
	auto doc = json::parse(
		ask(d, {"files", "--class", "SHORT", "--top", "1", "--live", "-o", "json"}).out);
	const json asked2 = json::parse(d.seen().back());
	CHECK(asked2["class"] == "short");
	CHECK(asked2["limit"] == 1);
	CHECK(asked2["live"] == true);
	CHECK(doc["matched"] == 3);  // the daemon's count over all its records
	REQUIRE(doc["files"].size() == 1);
	CHECK(doc["files"][0]["ino"] == 132);  // the daemon's first row, shown as given
	CHECK(doc["files"][0]["writer"] == "/kv.slice/engine-a.service");
}

TEST_CASE(
	"cli: policy shows kvfdpd's learned groups by handle, with writer, lifetime, share and live bytes")
{
	FakeDaemon d(all_replies());
	Ran r = ask(d, {"policy", "show"});
	INFO(r.err);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(golden_diff("policy_learned_daemon.txt", r.out) == "");
	auto doc = json::parse(ask(d, {"policy", "show", "-o", "json"}).out);
	CHECK(doc["learned"]["groups"] == 2);
	CHECK(doc["learned"]["keys"].size() == 3);
}

TEST_CASE("cli: stats through the fake daemon gives the lifetime WAF and its caveat")
{
	FakeDaemon d(all_replies());
	auto doc = json::parse(ask(d, {"stats", "-o", "json"}).out);
	CHECK(doc["hbmw"] == 12632064);
	REQUIRE(doc["lifetime"]["waf"].is_number());
	CHECK(doc["lifetime"]["waf"].get<double>() == doctest::Approx(1.0));
	CHECK(doc["lifetime"]["waf_note"].get<std::string>().find("MBE") != std::string::npos);
}

TEST_CASE(
	"cli: stats shows kvfdpd's live WAF twin beside the drive's WAF: with placement, without, saved")
{
	auto replies = all_replies();
	replies["stats"] =
		R"({"ok":true,"data":{"hbmw":12632064,"mbmw":12632064,"mbe":0,"waf":1.0,"twin":{"rate":0.015625,)"
		R"("memory_bytes":67108864,"model_logical_bytes":16777216,"model_ru_bytes":262144,"records":5000,"dropped":3,)"
		R"("model_errors":0,"host_bytes":1073741824,"placed":{"waf":1.02,"media_bytes":1095216660,"relocated_bytes":0},)"
		R"("none":{"waf":1.38,"media_bytes":1481763717,"relocated_bytes":0},"saved_bytes":386547057}}})";
	FakeDaemon d(replies);
	Ran r = ask(d, {"stats"});
	INFO(r.out);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.find("waf with placement     1.020") != std::string::npos);
	CHECK(r.out.find("waf without (none)     1.380") != std::string::npos);
	CHECK(r.out.find("saved by placement     368.64 MiB of media writes") != std::string::npos);
	CHECK(r.out.find("(3 dropped: ring full)") != std::string::npos);
	auto doc = json::parse(ask(d, {"stats", "-o", "json"}).out);
	CHECK(doc["twin"]["saved_bytes"] == 386547057);
	CHECK(doc["twin"]["none"]["waf"] == 1.38);
	CHECK(doc["lifetime"]["waf"].is_number());  // the drive's own, beside it
}

TEST_CASE(
	"cli: status warns in one line of a handle the twin's GC copies from far more than the others, and not of a balanced twin")
{
	// kvfdpd's stats reply with its twin: the placed copy's host and relocated bytes by handle.
	auto stats_with = [](const std::string &handles) {
		return R"({"ok":true,"data":{"hbmw":12632064,"mbmw":12632064,"mbe":0,"waf":1.0,"twin":{"rate":1,)"
		       R"("host_bytes":4294967296,"placed":{"waf":1.3,"media_bytes":5583457484,"relocated_bytes":1288490188},)"
		       R"("none":{"waf":1.4,"media_bytes":6012954214,"relocated_bytes":1717986918},"handles":)" +
		       handles + "}}}";
	};
	auto replies = all_replies();
	replies["stats"] =
		stats_with(R"([{"handle":0,"host_bytes":1073741824,"relocated_bytes":107374182},)"
			   R"({"handle":1,"host_bytes":2147483648,"relocated_bytes":53687091},)"
			   R"({"handle":3,"host_bytes":1073741824,"relocated_bytes":1073741824}])");
	FakeDaemon noisy(replies);
	Ran r = ask(noisy, {"status"});
	INFO(r.out);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	const std::string warning =
		"warning: handle 3 takes 87% of the twin's GC relocations (25% of host writes): its "
		"data dies out of write order";
	REQUIRE(r.out.find(warning) != std::string::npos);
	const std::string line = r.out.substr(r.out.find(warning));
	CHECK(line.find('\n') == line.size() - 1);  // one line, the last
	CHECK(line.find("(docs/twin.md, Noisy handles)") != std::string::npos);
	CHECK(noisy.seen() ==
	      std::vector<std::string>{R"({"cmd":"status"})", R"({"cmd":"stats"})"});
	auto doc = json::parse(ask(noisy, {"status", "-o", "json"}).out);
	CHECK(doc["noisy_handle"]["handle"] == 3);
	CHECK(doc["noisy_handle"]["relocated_share"].get<double>() ==
	      doctest::Approx(0.8696).epsilon(0.001));
	CHECK(doc["noisy_handle"]["warning"].get<std::string>().rfind("handle 3 takes 87%", 0) ==
	      0);
	// kvfdp stats lists the same per handle, and carries them in -o json.
	r = ask(noisy, {"stats"});
	CHECK(r.out.find(
		      "relocated by handle    0: 102.40 MiB (9%), 1: 51.20 MiB (4%), 3: 1.00 GiB (87%)\n") !=
	      std::string::npos);
	CHECK(json::parse(ask(noisy, {"stats", "-o", "json"})
				  .out)["twin"]["handles"][2]["relocated_bytes"] == 1073741824);

	replies["stats"] =
		stats_with(R"([{"handle":0,"host_bytes":1073741824,"relocated_bytes":429496729},)"
			   R"({"handle":1,"host_bytes":2147483648,"relocated_bytes":429496729},)"
			   R"({"handle":3,"host_bytes":1073741824,"relocated_bytes":429496729}])");
	FakeDaemon balanced(replies);
	r = ask(balanced, {"status"});
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.find("warning:") == std::string::npos);
	doc = json::parse(ask(balanced, {"status", "-o", "json"}).out);
	CHECK(doc.contains("noisy_handle"));
	CHECK(doc["noisy_handle"].is_null());
	// No twin (or a kvfdpd that refuses stats): no key, no line, status as before.
	FakeDaemon plain(all_replies());
	CHECK_FALSE(json::parse(ask(plain, {"status", "-o", "json"}).out).contains("noisy_handle"));
	FakeDaemon old(std::map<std::string, std::string>{{"status", kStatus}});
	r = ask(old, {"status"});
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out.find("warning:") == std::string::npos);
}

TEST_CASE(
	"cli: status takes the drive's own per-handle relocations first, the twin's where the drive's name none")
{
	// The drive's Media Reallocated figures name handle 1; the twin's name handle 3.
	auto stats_with = [](const std::string &drive) {
		return R"({"ok":true,"data":{"hbmw":12632064,"mbmw":12632064,"mbe":0,"waf":1.0,"twin":{"rate":1,)"
		       R"("host_bytes":4294967296,"handles":[{"handle":0,"host_bytes":1073741824,"relocated_bytes":0},)"
		       R"({"handle":3,"host_bytes":1073741824,"relocated_bytes":1073741824}]},"drive_handles":)" +
		       drive + "}}";
	};
	auto replies = all_replies();
	replies["stats"] =
		stats_with(R"([{"handle":0,"host_bytes":1073741824,"relocated_bytes":0},)"
			   R"({"handle":1,"host_bytes":3221225472,"relocated_bytes":536870912}])");
	FakeDaemon drive(replies);
	Ran r = ask(drive, {"status"});
	INFO(r.out);
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	const std::string warning =
		"warning: handle 1 takes 100% of the drive's (FDP events log) GC relocations (75% of "
		"host writes)";
	REQUIRE(r.out.find(warning) != std::string::npos);
	CHECK(r.out.find("warning:") == r.out.rfind("warning:"));  // exactly one line
	auto doc = json::parse(ask(drive, {"status", "-o", "json"}).out);
	CHECK(doc["noisy_handle"]["source"] == "drive");
	// kvfdp stats prints the drive's line once it reported relocations, and carries them.
	r = ask(drive, {"stats"});
	CHECK(r.out.find("relocated by handle, as the drive reports (FDP events log): 0: 0 B (0%), "
			 "1: 512.00 MiB (100%)\n") != std::string::npos);
	CHECK(json::parse(ask(drive, {"stats", "-o", "json"})
				  .out)["drive_handles"][1]["relocated_bytes"] == 536870912);

	replies["stats"] =
		stats_with(R"([{"handle":0,"host_bytes":1073741824,"relocated_bytes":0},)"
			   R"({"handle":1,"host_bytes":3221225472,"relocated_bytes":0}])");
	FakeDaemon quiet(replies);
	r = ask(quiet, {"status"});
	CHECK(r.out.find("warning: handle 3 takes 100% of the twin's GC relocations") !=
	      std::string::npos);
	CHECK(ask(quiet, {"stats"}).out.find("as the drive reports") == std::string::npos);
}

TEST_CASE(
	"cli: metrics from kvfdpd print kvfdpd's text as it is, nothing rebuilt from other replies")
{
	// kvfdpd's text as its renderer writes it (proto/metrics.hpp), without the RUH families
	// the fake's `ruh` reply could feed: the CLI must not add them, nor ask for them.
	kvfdp::proto::MetricsInput in;
	in.counters.class_bytes[2] = 8388608;
	in.counters.stale_tags = 2;
	in.tagger_active = true;
	const std::string text = kvfdp::proto::render_metrics(
		{kvfdp::proto::counter_families(in)[0], kvfdp::proto::daemon_up_family(true)});
	auto replies = all_replies();
	replies["metrics"] = json{{"ok", true}, {"data", {{"text", text}}}}.dump();
	FakeDaemon d(replies);
	Ran r = ask(d, {"metrics"});
	REQUIRE(r.rc == kvfdp::proto::kExitOk);
	CHECK(r.out == text);
	CHECK(r.out.find("kvfdp_class_bytes_total{class=\"short\"} 8388608") != std::string::npos);
	CHECK(r.out.find("kvfdp_ruh_ruamw_lbas") == std::string::npos);
	CHECK(r.out.find("kvfdp_daemon_up 1") != std::string::npos);
	REQUIRE(d.seen().size() == 1);
	CHECK(json::parse(d.seen()[0])["cmd"] == "metrics");

	// A text without its last newline gets one (a textfile must end in one).
	FakeDaemon cut(std::map<std::string, std::string>{
		{"metrics", R"({"ok":true,"data":{"text":"kvfdp_daemon_up 1"}})"}});
	CHECK(ask(cut, {"metrics"}).out == "kvfdp_daemon_up 1\n");
}

TEST_CASE("cli: a daemon refusal exits 1 with its error; garbage and hang-ups too")
{
	FakeDaemon refuse(
		{{"ruh", R"({"ok":false,"error":"backend 'file' has no placement handles"})"},
		 {"status", kStatus}});
	Ran r = ask(refuse, {"ruh"});
	CHECK(r.rc == kvfdp::proto::kExitError);
	CHECK(r.err.find("backend 'file' has no placement handles") != std::string::npos);

	FakeDaemon garbage({{"ruh", "this is not json"}, {"status", "[1,2]"}});
	Ran g = ask(garbage, {"ruh"});
	CHECK(g.rc == kvfdp::proto::kExitError);
	CHECK(g.err.find("not {\"ok\":...} JSON") != std::string::npos);
	CHECK(ask(garbage, {"status"}).rc == kvfdp::proto::kExitError);

	FakeDaemon hangup(std::map<std::string, std::string>{{"ruh", "<hang-up>"}});
	Ran h = ask(hangup, {"ruh"});
	CHECK(h.rc == kvfdp::proto::kExitError);
	CHECK(h.err.find("closed the connection") != std::string::npos);

	// Well-formed but the wrong shape: an error, not a crash.
	FakeDaemon shape({{"ruh", R"({"ok":true,"data":{"ruhss":"eight"}})"}, {"status", kStatus}});
	Ran s = ask(shape, {"ruh"});
	CHECK(s.rc == kvfdp::proto::kExitError);
	CHECK(s.err.find("no ruhss array") != std::string::npos);
}

namespace {

// A twin window as kvfdpd pages it (docs/control.md, twin_window): records numbered from 0,
// the last `capacity` of `total` held, record n at lba n.
struct FakeWindow {
	uint64_t capacity = 0;
	uint64_t total = 0;
	int asks = 0;
	DaemonReply page(const kvfdp::proto::TwinWindowRequest &req)
	{
		asks++;
		const uint64_t oldest = total > capacity ? total - capacity : 0;
		kvfdp::proto::TwinWindow w;
		w.capacity = capacity;
		w.total = total;
		w.first = std::clamp(req.from.value_or(0), oldest, total);
		w.next = std::min(total, w.first + req.max);
		for (uint64_t n = w.first; n < w.next; n++)
			w.records.push_back({n, 1, 0, kvfdp::proto::TwinWindowOp::write});
		DaemonReply r;
		r.ok = true;
		r.data = w;
		return r;
	}
};

}  // namespace

TEST_CASE(
	"cli: the twin window comes page by page up to the first page's newest; overwritten records count as dropped")
{
	using kvfdp::proto::TwinWindow;
	using kvfdp::proto::TwinWindowRequest;
	DaemonError err;
	SUBCASE("a quiet window: every record once, in order")
	{
		FakeWindow f{50000, 40000};
		TwinWindow w;
		REQUIRE(fetch_twin_window([&f](const TwinWindowRequest &r) { return f.page(r); }, w,
					  err));
		CHECK(f.asks == 3);  // 16384 + 16384 + 7232
		REQUIRE(w.records.size() == 40000);
		for (uint64_t i = 0; i < w.records.size(); i++)
			REQUIRE(w.records[i].lba == i);
		CHECK(w.dropped == 0);
		CHECK(w.next == 40000);
	}
	SUBCASE("records overwritten between pages are counted, not waited for")
	{
		FakeWindow f{40000, 40000};
		TwinWindow w;
		REQUIRE(fetch_twin_window(
			[&f](const TwinWindowRequest &r) {
				if (f.asks == 1)
					f.total +=
						30000;  // the twin wrote on: records up to 29999 are gone
				return f.page(r);
			},
			w, err));
		CHECK(f.asks == 2);
		REQUIRE(w.records.size() == 2 * kvfdp::proto::kTwinWindowPage);
		CHECK(w.records[16383].lba == 16383);
		CHECK(w.records[16384].lba == 30000);
		CHECK(w.dropped == 30000 - 16384);
	}
	SUBCASE("a kvfdpd that sends the whole window at once (no next): one request")
	{
		TwinWindow w;
		int asks = 0;
		REQUIRE(fetch_twin_window(
			[&asks](const TwinWindowRequest &) {
				asks++;
				DaemonReply r;
				r.ok = true;
				r.data =
					json{{"total", 5},
					     {"records", json::array({json::array({1, 2, 3, 1})})}};
				return r;
			},
			w, err));
		CHECK(asks == 1);
		CHECK(w.records.size() == 1);
	}
	SUBCASE("a failed page fails the whole, with the daemon's error")
	{
		FakeWindow f{50000, 40000};
		TwinWindow w;
		CHECK_FALSE(fetch_twin_window(
			[&f](const TwinWindowRequest &r) {
				if (f.asks == 1) {
					DaemonReply no;
					no.error = {DaemonFailure::refused,
						    "kvfdpd refused 'twin_window': x"};
					return no;
				}
				return f.page(r);
			},
			w, err));
		CHECK(err.kind == DaemonFailure::refused);
		CHECK(err.message == "kvfdpd refused 'twin_window': x");
	}
}
