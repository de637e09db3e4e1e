// The twin in kvfdpd: twin_for over the backends (none without FDP, a refused bound stops the
// start only when it was given), and a State over the FDP SSD model whose queue ring carries
// two writers of different turnover: the stats reply's "twin", its text in `kvfdp stats` and
// the kvfdp_twin_* families show the projection, and "saved" is above 0.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/temp_files.hpp"
#include "tests/twin/two_writers.hpp"
#include "userspace/daemon/ctl/backend.hpp"
#include "userspace/daemon/ctl/control_handlers.hpp"
#include "userspace/daemon/ctl/daemon_metrics.hpp"
#include "userspace/daemon/ctl/daemon_state.hpp"
#include "proto/twin_text.hpp"
#include "userspace/twin/report.hpp"
#include "userspace/twin/twin.hpp"

using namespace kvfdp;
using nlohmann::json;

namespace {

std::unique_ptr<nvme::Device> open_model(const std::string &dir, uint64_t size, uint64_t ru)
{
	daemon::BackendOptions b;
	b.kind = "model";
	b.file = dir + "/model.img";
	b.size = size;
	b.ru_size = ru;
	b.nruh = 8;
	auto dev = daemon::open_backend(b);
	REQUIRE_MESSAGE(dev.ok(), dev.error().message());
	return std::move(*dev);
}

}  // namespace

TEST_CASE(
	"twin: twin_for makes none without FDP or with memory 0, and refuses a given bound too small for one RU")
{
	nvme::DeviceInfo file;
	file.nlb = 1 << 20;
	file.lba_size = 4096;
	auto none = twin::twin_for(file, 0, 0, twin::TwinSettings{});
	REQUIRE(none);
	CHECK(*none == nullptr);
	nvme::DeviceInfo fdp = file;
	fdp.fdp_enabled = true;
	fdp.ru_size = 1 << 20;
	auto off = twin::twin_for(fdp, 8, 0.28, twin::TwinSettings{0, true, 0});
	REQUIRE(off);
	CHECK(*off == nullptr);
	auto given = twin::twin_for(fdp, 8, 0.28, twin::TwinSettings{4096, true, 0});
	REQUIRE_FALSE(given);
	CHECK(given.error().message().rfind(
		      "twin: a memory bound of 4.0 KiB is too small for one reclaim unit", 0) == 0);
	// The default bound refused (here: an unknown RU size) is a warning and no twin, not a failed start.
	fdp.ru_size = 0;
	auto dflt = twin::twin_for(fdp, 8, 0.28, twin::TwinSettings{});
	REQUIRE(dflt);
	CHECK(*dflt == nullptr);
}

TEST_CASE(
	"twin: kvfdpd on the model with two writers of different turnover: stats, text and metrics show saved > 0")
{
	test::TempDir dir;
	daemon::State s;
	s.device = open_model(dir.path, 64ull << 20, 1 << 20);
	s.info = s.device->info();
	s.nruh = 8;
	auto p = daemon::make_policy(daemon::PolicyConfig{}, 8);
	REQUIRE(p.ok());
	s.policy = std::make_shared<const daemon::Policy>(std::move(*p));
	auto t = twin::twin_for(s.info, s.nruh, 0.28, twin::TwinSettings{});
	REQUIRE_MESSAGE(t.ok(), t.error().message());
	REQUIRE(*t);
	s.twin = std::move(*t);
	CHECK(s.twin->plan().rate == 1);
	const uint64_t pushed = test::push_two_writers(*s.twin);
	const twin::TwinReport rep = s.twin->report();
	CHECK(rep.records == pushed);
	CHECK(rep.dropped == 0);
	CHECK(rep.waf_placed < rep.waf_none);
	CHECK(rep.saved_bytes > 0);

	const json r =
		json::parse(daemon::handle_control_line(s, R"({"cmd":"stats"})"), nullptr, false);
	REQUIRE_MESSAGE(r.value("ok", false), r.dump());
	const json &tw = r["data"]["twin"];
	CHECK(tw["rate"] == 1.0);
	CHECK(tw["records"] == pushed);
	CHECK(tw["saved_bytes"].get<int64_t>() > 0);
	CHECK(tw["placed"]["waf"].get<double>() < tw["none"]["waf"].get<double>());
	CHECK(r["data"].contains("waf"));  // the drive's own measured WAF beside it
	const std::string text = proto::twin_text(tw);
	CHECK(text.find("waf with placement") != std::string::npos);
	CHECK(text.find("saved by placement") != std::string::npos);
	const std::string m = daemon::metrics_exposition(s);
	for (const char *f :
	     {"kvfdp_twin_waf{placement=\"placed\"}", "kvfdp_twin_waf{placement=\"none\"}",
	      "# TYPE kvfdp_twin_saved_bytes gauge",
	      "kvfdp_twin_media_bytes_total{placement=\"none\"}", "kvfdp_twin_dropped_total 0",
	      "kvfdp_twin_sample_rate 1.0"})
		CHECK_MESSAGE(m.find(f) != std::string::npos, f);
	MESSAGE("placed ", rep.waf_placed, " none ", rep.waf_none, " saved ", rep.saved_bytes,
		" memory ", rep.memory_bytes);
}
