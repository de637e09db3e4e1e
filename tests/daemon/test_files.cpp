// kvfdpd's `files` reply from the tagger's per-file table. The events are built here by hand
// (the same struct the BPF ring delivers); the real ring feeds it in the daemon_placement VM
// scenario.
#include <doctest/doctest.h>

#include <cstring>

#include "bpf/user/files.hpp"
#include "userspace/daemon/files_reply.hpp"

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

} // namespace

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
