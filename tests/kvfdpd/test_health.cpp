// kvfdpd's health (proto/health.hpp): DEGRADED exactly when the tagger is not
// active, with its reason, in the status reply's "health" key, the unit's STATUS= and the
// refusal of a start with require_tagger; a status reply without the key reads the same. And
// a State over the FDP SSD model with its tagger off (--no-tagger): its status reply and its
// /metrics say so.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/temp_files.hpp"
#include "kvfdpd/daemon/ctl/backend.hpp"
#include "kvfdpd/daemon/ctl/control_handlers.hpp"
#include "kvfdpd/daemon/ctl/daemon_metrics.hpp"
#include "kvfdpd/daemon/ctl/daemon_state.hpp"
#include "proto/health.hpp"
#include "kvfdpd/daemon/ctl/notify.hpp"

using namespace kvfdp::daemon;
using nlohmann::json;

TEST_CASE("health: DEGRADED exactly when the tagger is not active, saying why and what it costs")
{
	const kvfdp::proto::Health ok = kvfdp::proto::health_of(
		true, "lsm/inode_unlink refused at load (Operation not permitted)");
	CHECK_FALSE(ok.degraded);
	CHECK(ok.why.empty());
	CHECK(kvfdp::proto::health_json(ok) == json{{"state", "ok"}, {"why", ""}});

	const kvfdp::proto::Health bad = kvfdp::proto::health_of(
		false, "tagger: load the BPF programs: Invalid argument: program kvfdp_rq_issue");
	CHECK(bad.degraded);
	CHECK(bad.why ==
	      "the BPF tagger is not active (tagger: load the BPF programs: Invalid argument: program "
	      "kvfdp_rq_issue): every write goes to the default handle, unplaced");
	CHECK(kvfdp::proto::health_json(bad)["state"] == "degraded");
	CHECK(kvfdp::proto::health_of(false, "").why ==
	      "the BPF tagger is not active: every write goes to the default handle, unplaced");
}

TEST_CASE("health: the unit's STATUS= says DEGRADED first, and nothing more while placing")
{
	CHECK(kvfdp::proto::serving_status("serving /dev/ublkb0",
					   kvfdp::proto::health_of(true, "")) ==
	      "serving /dev/ublkb0");
	const std::string st = kvfdp::proto::serving_status(
		"serving /dev/ublkb0", kvfdp::proto::health_of(false, "disabled with --no-tagger"));
	CHECK(st ==
	      "DEGRADED: serving /dev/ublkb0, the BPF tagger is not active (disabled with --no-tagger): every "
	      "write goes to the default handle, unplaced");
	CHECK(ready_message(st) == "READY=1\nSTATUS=" + st);
}

TEST_CASE("health: read back from a status reply, with or without its health key")
{
	const json with = {{"health", {{"state", "degraded"}, {"why", "w"}}},
			   {"tagging", {{"active", true}}}};
	CHECK(kvfdp::proto::health_from_status(with).degraded);  // the daemon's own word wins
	CHECK(kvfdp::proto::health_from_status(with).why == "w");
	const json older = {{"tagging", {{"active", false}, {"reason", "r"}}}};
	CHECK(kvfdp::proto::health_from_status(older).degraded);
	CHECK(kvfdp::proto::health_from_status(older).why ==
	      kvfdp::proto::health_of(false, "r").why);
	CHECK_FALSE(
		kvfdp::proto::health_from_status(json{{"tagging", {{"active", true}}}}).degraded);
	CHECK_FALSE(kvfdp::proto::health_from_status(json{{"daemon", {{"running", false}}}})
			    .degraded);  // no kvfdpd: no verdict
	CHECK_FALSE(kvfdp::proto::health_from_status(json::array()).degraded);
}

TEST_CASE(
	"health: require_tagger's refusal names where it was required, why the tagger is off, what to do")
{
	const std::string flag = kvfdp::proto::require_tagger_refusal("--require-tagger",
								      "disabled with --no-tagger");
	CHECK(flag ==
	      "the BPF tagger is required (--require-tagger) but not active (disabled with --no-tagger): fix "
	      "what that names (docs/deploy.md, When placement does not happen), or drop --require-tagger to serve with every "
	      "write on the default handle");
	const std::string file =
		kvfdp::proto::require_tagger_refusal("/etc/kvfdp/kvfdp.toml:3", "");
	CHECK(file.rfind("the BPF tagger is required (/etc/kvfdp/kvfdp.toml:3) but not active: fix",
			 0) == 0);
	CHECK(file.find("or drop require_tagger to serve") != std::string::npos);
	CHECK(file.find('\n') == std::string::npos);
}

TEST_CASE(
	"health: kvfdpd with --no-tagger on the model answers status DEGRADED and /metrics kvfdp_tagger_active 0")
{
	kvfdp::test::TempDir dir;
	BackendOptions b;
	b.kind = "model";
	b.file = dir.path + "/model.img";
	b.size = 64ull << 20;
	b.nruh = 8;
	auto dev = open_backend(b);
	REQUIRE_MESSAGE(dev.ok(), dev.error().message());
	State s;
	s.device = std::move(*dev);
	s.info = s.device->info();
	auto p = kvfdp::placement::make_policy(kvfdp::placement::PolicyConfig{}, 8);
	REQUIRE(p.ok());
	s.policy = std::make_shared<const kvfdp::placement::Policy>(std::move(*p));
	s.tagger.load(true, 1, 64, "", true);  // --no-tagger
	const json r = json::parse(handle_control_line(s, R"({"cmd":"status"})"), nullptr, false);
	REQUIRE_MESSAGE(r.value("ok", false), r.dump());
	CHECK(r["data"]["tagging"]["active"] == false);
	CHECK(r["data"]["health"]["state"] == "degraded");
	CHECK(r["data"]["health"]["why"] ==
	      "the BPF tagger is not active (disabled with --no-tagger): every write goes to "
	      "the default handle, unplaced");
	CHECK(metrics_exposition(s).find("\nkvfdp_tagger_active 0\n") != std::string::npos);
}
