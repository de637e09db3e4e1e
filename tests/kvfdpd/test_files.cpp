// kvfdpd's `files` reply from the tagger's per-file table. The events are built here by hand
// (the same struct the BPF ring delivers); the real ring feeds it in the daemon_placement VM
// scenario.
#include <doctest/doctest.h>

#include <cstring>

#include "bpf/user/files.hpp"
#include "kvfdpd/daemon/ctl/files_rows.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;
using nlohmann::json;

namespace {

kvfdp_event ev(uint32_t type, uint64_t ino, uint64_t t_ns, uint32_t value, uint64_t bytes = 0)
{
	kvfdp_event e{};
	e.type = type;
	e.dev = (259u << 20) | 3;  // 259:3
	e.ino = ino;
	e.t_ns = t_ns;
	e.value = value;
	e.bytes = bytes;
	e.pid = 42;
	std::strncpy(e.comm, "vllm", sizeof(e.comm));
	return e;
}

constexpr uint64_t kSec = 1000000000ull;

}  // namespace

TEST_CASE("files reply: live and deleted files with class, bytes, birth, death, lifetime")
{
	bpf::FileTable t;
	t.on_event(ev(KVFDP_EV_CREATE, 10, 100 * kSec, KVFDP_NO_CLASS));
	t.on_event(ev(KVFDP_EV_HINT, 10, 100 * kSec, KVFDP_CLASS_SHORT));
	t.on_event(ev(KVFDP_EV_CREATE, 11, 101 * kSec, KVFDP_CLASS_EXTREME));  // from a rule
	t.on_event(ev(KVFDP_EV_UNLINK, 10, 160 * kSec + kSec / 2, 0, 4 << 20));
	t.refresh_bytes([](uint32_t, uint64_t ino) { return ino == 11 ? 8192u : 0u; });
	const int64_t offset = 1764668000ll * 1000000000ll;  // realtime - monotonic
	const json d = files_json(t, 1000, offset);

	CHECK(d["available"] == true);
	CHECK(d["live"] == 1);
	CHECK(d["deleted"] == 1);
	CHECK(d["matched"] == 2);
	REQUIRE(d["files"].size() == 2);
	// Newest event first: the deletion at t=160.5 s, then the birth at 101 s.
	const json &dead = d["files"][0];
	CHECK(dead["dev"] == "259:3");
	CHECK(dead["ino"] == 10);
	CHECK(dead["class"] == "short");
	CHECK(dead["class_from"] == "hint");
	CHECK(dead["bytes"] == 4 << 20);
	CHECK(dead["birth"].get<double>() == doctest::Approx(1764668100.0));
	CHECK(dead["death"].get<double>() == doctest::Approx(1764668160.5));
	CHECK(dead["lifetime_s"].get<double>() == doctest::Approx(60.5));
	CHECK(dead["pid"] == 42);
	CHECK(dead["comm"] == "vllm");
	const json &live = d["files"][1];
	CHECK(live["ino"] == 11);
	CHECK(live["class"] == "extreme");
	CHECK(live["class_from"] == "rule");
	CHECK(live["bytes"] == 8192);
	CHECK(live["death"].is_null());
	CHECK(live["lifetime_s"].is_null());
	// Per-class measured lifetimes: one short file of 60.5 s.
	REQUIRE(d["lifetimes"].size() == 6);
	CHECK(d["lifetimes"][KVFDP_CLASS_SHORT]["class"] == "short");
	CHECK(d["lifetimes"][KVFDP_CLASS_SHORT]["count"] == 1);
	CHECK(d["lifetimes"][KVFDP_CLASS_SHORT]["mean_s"].get<double>() == doctest::Approx(60.5));
	CHECK(d["lifetimes"][KVFDP_CLASS_LONG]["mean_s"].is_null());
}

TEST_CASE("files reply: limit keeps the newest; unknown birth is null; empty table")
{
	bpf::FileTable t;
	CHECK(files_json(t, 10, 0)["files"].empty());
	for (uint64_t i = 1; i <= 5; i++)
		t.on_event(ev(KVFDP_EV_CREATE, i, i * kSec, KVFDP_NO_CLASS));
	t.on_event(ev(KVFDP_EV_HINT, 99, 9 * kSec, KVFDP_CLASS_LONG));  // created before we watched
	const json d = files_json(t, 3, 0);
	CHECK(d["matched"] == 6);
	REQUIRE(d["files"].size() == 3);
	CHECK(d["files"][0]["ino"] == 5);
	CHECK(d["files"][1]["ino"] == 4);
	CHECK(d["files"][2]["ino"] == 3);
	const json all = files_json(t, 100, 0);
	const json &old = all["files"].back();
	CHECK(old["ino"] == 99);
	CHECK(old["birth"].is_null());
	CHECK(old["class"] == "long");
	CHECK(old["class"] != "not_set");
	CHECK(all["files"][0]["class"] == "not_set");
	CHECK(all["files"][0]["class_from"] == "none");
}

TEST_CASE("files reply: the realtime offset is the wall clock minus the monotonic clock")
{
	const int64_t off = realtime_minus_monotonic_ns();
	CHECK(off > 0);  // the wall clock is past 1970 + uptime
}

TEST_CASE(
	"files reply: largest first and class/live filters rank over every record, not the newest rows")
{
	// 3000 files: the largest are the oldest, so a reply of the newest 2000 would miss them.
	bpf::FileTable t(8192);
	for (uint64_t i = 1; i <= 3000; i++) {
		t.on_event(ev(KVFDP_EV_CREATE, i, i * kSec,
			      i % 3 == 0 ? KVFDP_CLASS_LONG : KVFDP_NO_CLASS));
		if (i % 2 == 0)
			t.on_event(ev(KVFDP_EV_UNLINK, i, (i + 5000) * kSec, 0, (4000 - i) * 4096));
	}
	t.refresh_bytes([](uint32_t, uint64_t ino) { return (4000 - ino) * 4096; });
	proto::FilesQuery q;
	q.limit = 5;
	q.order = proto::FilesQuery::Order::bytes;
	json d = files_json(t, q, 0);
	CHECK(d["matched"] == 3000);
	REQUIRE(d["files"].size() == 5);
	for (uint64_t k = 0; k < 5; k++)
		CHECK(d["files"][k]["ino"] == k + 1);  // 3999, 3998, ... pages: inodes 1..5
	q.cls = KVFDP_CLASS_LONG;
	d = files_json(t, q, 0);
	CHECK(d["matched"] == 1000);
	REQUIRE(d["files"].size() == 5);
	CHECK(d["files"][0]["ino"] == 3);
	CHECK(d["files"][4]["ino"] == 15);
	q.live_only = true;
	d = files_json(t, q, 0);
	CHECK(d["matched"] == 500);  // odd multiples of 3
	CHECK(d["files"][0]["ino"] == 3);
	CHECK(d["files"][1]["ino"] == 9);
	for (const json &f : d["files"])
		CHECK(f["death"].is_null());
	// Newest first stays the default order.
	q = proto::FilesQuery{};
	q.limit = 1;
	CHECK(files_json(t, q, 0)["files"][0]["ino"] == 3000);  // died at 8000 s
}

TEST_CASE("files query: arguments are checked, with one-line errors")
{
	proto::FilesQuery q;
	std::string err;
	CHECK(proto::parse_files_query(json{{"cmd", "files"}}, q, err));
	CHECK(q.limit == 1000);
	CHECK(q.order == proto::FilesQuery::Order::newest);
	CHECK(proto::parse_files_query(
		json{{"limit", 7}, {"sort", "bytes"}, {"class", "short"}, {"live", true}}, q, err));
	CHECK(q.limit == 7);
	CHECK(q.order == proto::FilesQuery::Order::bytes);
	CHECK(q.cls == KVFDP_CLASS_SHORT);
	CHECK(q.live_only);
	CHECK(proto::parse_files_query(json{{"class", 4}}, q, err));
	CHECK(q.cls == KVFDP_CLASS_LONG);
	for (const json &bad :
	     {json{{"limit", 0}}, json{{"limit", -3}}, json{{"sort", "size"}},
	      json{{"class", "forever"}}, json{{"class", 9}}, json{{"live", "yes"}}}) {
		err.clear();
		CHECK_FALSE(proto::parse_files_query(bad, q, err));
		CHECK(err.rfind("files: ", 0) == 0);
		CHECK(err.find('\n') == std::string::npos);
	}
}

TEST_CASE("files reply: each row names its writer and cgroup")
{
	bpf::FileTable t;
	kvfdp_event e = ev(KVFDP_EV_CREATE, 7, kSec, KVFDP_NO_CLASS);
	e.writer = KVFDP_WRITER_NAMED | 2;
	e.cgroup_id = 4242;
	t.on_event(e);
	kvfdp_event e2 = ev(KVFDP_EV_CREATE, 8, 2 * kSec, KVFDP_NO_CLASS);
	t.on_event(e2);  // writer unknown
	const json d = files_json(t, proto::FilesQuery{}, 0, [](const bpf::FileRecord &r) {
		return r.writer ? "engine-" + std::to_string(r.writer & ~KVFDP_WRITER_NAMED)
				: std::string();
	});
	REQUIRE(d["files"].size() == 2);
	CHECK(d["files"][1]["writer"] == "engine-2");
	CHECK(d["files"][1]["writer_id"] == (KVFDP_WRITER_NAMED | 2));
	CHECK(d["files"][1]["cgroup_id"] == 4242);
	CHECK_FALSE(d["files"][0].contains("writer"));
	CHECK(d["files"][0]["writer_id"] == 0);
}
