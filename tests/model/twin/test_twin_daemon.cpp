// The twin in kvfdpd: twin_for over the backends (none without FDP, a refused bound stops the
// start only when it was given), and a State over the FDP SSD model whose queue ring carries
// two writers of different turnover: the stats reply's "twin", its text in `kvfdp stats` and
// the kvfdp_twin_* families show the projection, and "saved" is above 0.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "nvme/logs.hpp"
#include "nvme/spec.hpp"
#include "tests/model/ftl/model_io.hpp"
#include "tests/support/temp_files.hpp"
#include "tests/model/twin/two_writers.hpp"
#include "kvfdpd/daemon/ctl/backend.hpp"
#include "kvfdpd/daemon/ctl/control_handlers.hpp"
#include "kvfdpd/daemon/ctl/daemon_metrics.hpp"
#include "kvfdpd/daemon/ctl/daemon_state.hpp"
#include "kvfdpd/daemon/ctl/drive_relocations.hpp"
#include "proto/control.hpp"
#include "proto/twin_text.hpp"
#include "model/twin/report.hpp"
#include "model/twin/twin.hpp"

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

// s as kvfdpd on a 64 MiB model of 1 MiB RUs and 8 handles, with the default class map.
void on_model(daemon::State &s, const std::string &dir)
{
	s.device = open_model(dir, 64ull << 20, 1 << 20);
	s.info = s.device->info();
	s.nruh = 8;
	auto p = kvfdp::placement::make_policy(kvfdp::placement::PolicyConfig{}, 8);
	REQUIRE(p.ok());
	s.policy = std::make_shared<const kvfdp::placement::Policy>(std::move(*p));
}

// A drive whose FDP events log is whatever the test put in events; nothing else.
class EventsDrive final : public nvme::Device {
public:
	std::vector<nvme::FdpEvent> events;
	bool no_log = false;
	const nvme::DeviceInfo &info() const override { return info_; }
	Result<std::vector<nvme::Handle>> handles() override { return std::vector<nvme::Handle>{}; }
	Result<std::vector<uint8_t>> log_page(uint8_t lid, uint8_t lsp) override
	{
		if (no_log || lid != nvme::kLidFdpEvents || lsp != 0)
			return make_error(std::errc::invalid_argument, "not the controller events");
		return nvme::encode_fdp_events(events);
	}
	Result<std::unique_ptr<nvme::IoQueue>> open_queue(io_uring &) override
	{
		return make_error(std::errc::not_supported, "no I/O");
	}
	Result<void> ruh_update(std::span<const uint16_t>) override { return ok(); }

private:
	nvme::DeviceInfo info_;
};

nvme::FdpEvent reallocated(uint16_t pid, uint64_t ms, uint16_t nlbam, uint32_t nsid = 1)
{
	nvme::FdpEvent e{};
	e.type = nvme::kFdpEventMediaReallocated;
	e.flags = nvme::kFdpEventFlagPiv | nvme::kFdpEventFlagNsidv;
	e.pid = pid;
	e.nsid = nsid;
	nvme::set_fdp_event_time(e, ms);
	nvme::set_fdp_event_nlbam(e, nlbam);
	return e;
}

}  // namespace

TEST_CASE(
	"twin: the drive's Media Reallocated events count once per handle across polls, same-millisecond ones too")
{
	EventsDrive d;
	daemon::DriveRelocations r({0, 0x10, 0x22}, 1, 4096);
	CHECK_FALSE(r.read());
	d.events = {reallocated(0x10, 5, 2), reallocated(0x22, 7, 1), reallocated(0x10, 7, 3)};
	REQUIRE(r.poll(d).ok());
	CHECK(r.read());
	CHECK(r.bytes() == std::vector<uint64_t>{0, 5 * 4096, 4096});
	REQUIRE(r.poll(d).ok());  // the same log again: nothing new
	CHECK(r.events() == 3);
	// The oldest dropped, one more stamped 7 and a later one; another namespace's, an unknown
	// PID's and an event of another type are skipped.
	nvme::FdpEvent other{};
	other.type = nvme::kFdpEventImplicitlyModifiedRuh;
	nvme::set_fdp_event_time(other, 9);
	d.events = {reallocated(0x22, 7, 1),    reallocated(0x10, 7, 3), reallocated(0, 7, 4),
		    reallocated(0x10, 8, 1, 2), reallocated(0x7, 8, 9),  other,
		    reallocated(0, 9, 6)};
	REQUIRE(r.poll(d).ok());
	CHECK(r.bytes() == std::vector<uint64_t>{10 * 4096, 5 * 4096, 4096});
	CHECK(r.events() == 5);
	const auto rep = r.report(d, proto::CounterSnapshot{});
	REQUIRE(rep);
	CHECK((*rep)[0].relocated_bytes == 10 * 4096);
	// A drive without the log: no figures at all, not zeros.
	daemon::DriveRelocations off({0}, 1, 4096);
	d.no_log = true;
	CHECK_FALSE(off.poll(d).ok());
	CHECK_FALSE(off.report(d, proto::CounterSnapshot{}));
}

TEST_CASE(
	"twin: kvfdpd on the model counts the drive's relocations per handle in stats and /metrics, each event once")
{
	test::TempDir dir;
	daemon::State s;
	on_model(s, dir.path);
	auto hs = s.device->handles();
	REQUIRE(hs.ok());
	std::vector<uint16_t> pids;
	for (const nvme::Handle &h : *hs)
		pids.push_back(h.pid);
	s.drive_relocations =
		std::make_unique<daemon::DriveRelocations>(pids, s.info.nsid, s.info.lba_size);
	io_uring ring{};
	auto q = s.device->open_queue(ring);
	REQUIRE(q.ok());
	const uint64_t nlb = s.info.nlb;
	std::vector<uint8_t> buf(4096, 1);
	for (uint64_t lba = 0; lba < nlb / 2; lba++)  // handle 0: written once, never relocated
		REQUIRE(test::model_io(**q, nvme::IoOp::write, 0, lba, 1, buf.data()) == 0);
	// Handle 1 churns the upper half; a reader of its own takes every event as it comes (the
	// reference), kvfdpd's stats reply polls every 16 writes, well inside the log's 63.
	uint64_t seen = 0, expect = 0, x = 99;
	json r;
	for (uint64_t i = 0; i < 3 * nlb / 2; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		const uint64_t lba = nlb / 2 + (x >> 33) % (nlb / 2);
		REQUIRE(test::model_io(**q, nvme::IoOp::write, 1, lba, 1, buf.data()) == 0);
		auto el = s.device->log_page(nvme::kLidFdpEvents, 0);
		REQUIRE(el.ok());
		auto ev = nvme::parse_fdp_events(*el);
		REQUIRE(ev.ok());
		for (const nvme::FdpEvent &e : *ev)
			if (nvme::fdp_event_time(e) > seen) {
				seen = nvme::fdp_event_time(e);
				REQUIRE(e.pid == pids[1]);
				expect += uint64_t{nvme::fdp_event_nlbam(e)} * 4096;
			}
		if (i % 16 == 15)
			r = json::parse(daemon::handle_control_line(s, R"({"cmd":"stats"})"));
	}
	REQUIRE(expect > 0);
	for (int poll = 0; poll < 2; poll++) {  // the last events, then nothing new
		r = json::parse(daemon::handle_control_line(s, R"({"cmd":"stats"})"));
		REQUIRE_MESSAGE(r.value("ok", false), r.dump());
		const json &dh = r["data"][proto::kDriveHandlesKey];
		REQUIRE(dh.size() == 8);
		CHECK(dh[0]["relocated_bytes"] == 0);
		CHECK(dh[1]["relocated_bytes"] == expect);
	}
	CHECK(proto::drive_handles_text(
		      proto::reply_as<proto::StatsReply>(r["data"]).drive_handles.value())
		      .find("1: ") != std::string::npos);
	const std::string m = daemon::metrics_exposition(s);  // polls too: still each event once
	const std::string line =
		"kvfdp_drive_handle_relocated_bytes_total{handle=\"1\"} " + std::to_string(expect);
	CHECK_MESSAGE(m.find(line) != std::string::npos, m);
	CHECK(m.find("# TYPE kvfdp_drive_handle_relocated_bytes_total counter") !=
	      std::string::npos);
}

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
	auto off = twin::twin_for(fdp, 8, 0.28, twin::TwinSettings{0, true, 0, {}});
	REQUIRE(off);
	CHECK(*off == nullptr);
	auto given = twin::twin_for(fdp, 8, 0.28, twin::TwinSettings{4096, true, 0, {}});
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
	on_model(s, dir.path);
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

TEST_CASE(
	"twin: the stats reply and /metrics count the records still in the rings, with no twin thread to drain them")
{
	test::TempDir dir;
	daemon::State s;
	on_model(s, dir.path);
	twin::TwinOptions o;
	o.geometry = twin::TwinGeometry{s.info.nlb, s.info.lba_size, s.info.ru_size, s.nruh, 0.28};
	auto t = twin::Twin::create(o);
	REQUIRE_MESSAGE(t.ok(), t.error().message());
	s.twin = std::move(*t);
	s.twin->add_rings(1);  // not started: the readers alone drain
	twin::Ring &ring = s.twin->ring(0);
	for (uint64_t i = 0; i < 100; i++)
		REQUIRE(ring.push(twin::Record{i * 32, 32, static_cast<uint16_t>(1 + i % 2),
					       twin::Op::write, 0}));
	const json r = json::parse(daemon::handle_control_line(s, R"({"cmd":"stats"})"));
	REQUIRE_MESSAGE(r.value("ok", false), r.dump());
	CHECK(r["data"]["twin"]["records"] == 100);
	CHECK(r["data"]["twin"]["host_bytes"] == 100 * 32 * 4096);
	for (uint64_t i = 0; i < 20; i++)
		REQUIRE(ring.push(twin::Record{i * 32, 32, 1, twin::Op::write, 0}));
	const std::string m = daemon::metrics_exposition(s);
	CHECK_MESSAGE(m.find("kvfdp_twin_records_total 120\n") != std::string::npos, m);
}
