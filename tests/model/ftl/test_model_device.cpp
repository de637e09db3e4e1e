// Unit tests of the model backend of nvme::Device: data round trip, RUH Status, and the FDP
// log pages decoded with the same parsers kvfdp uses on real drives.
#include <doctest/doctest.h>

#include <liburing.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nvme/logs.hpp"
#include "model/ftl/ftl.hpp"
#include "model/ftl/model_device.hpp"
#include "nvme/spec.hpp"
#include "tests/model/ftl/model_io.hpp"
#include "tests/support/temp_files.hpp"

using namespace kvfdp;

namespace {

using kvfdp::test::TempFile;

model::ModelDeviceOptions options(const std::string &path)
{
	model::ModelDeviceOptions o;
	o.config.logical_bytes = 16u << 20;
	o.config.ru_size = 256u << 10;
	o.config.nruh = 4;
	o.config.op = 0.25;
	o.config.ruh_types = {
		model::HandleType::initially_isolated, model::HandleType::initially_isolated,
		model::HandleType::persistently_isolated, model::HandleType::initially_isolated};
	o.data_path = path;
	return o;
}

constexpr auto &io = test::model_io;

// A model device of options() shape, with its one queue open.
struct Opened {
	TempFile tf;
	std::unique_ptr<nvme::Device> dev;
	io_uring ring{};
	std::unique_ptr<nvme::IoQueue> q;
	Opened()
	{
		auto d = model::open_model_device(options(tf.path));
		REQUIRE(d.ok());
		dev = std::move(d).value();
		auto qq = dev->open_queue(ring);
		REQUIRE(qq.ok());
		q = std::move(qq).value();
	}
};

}  // namespace

TEST_CASE("model device: reads return what was written; trims read back as zeros")
{
	TempFile tf;
	auto dev = model::open_model_device(options(tf.path));
	REQUIRE(dev.ok());
	const nvme::DeviceInfo &info = (*dev)->info();
	CHECK(info.backend == "model");
	CHECK(info.lba_size == 4096);
	CHECK(info.nlb == (16u << 20) / 4096);
	CHECK(info.fdp_enabled);
	CHECK(info.nruh == 4);
	CHECK(info.ru_size == 256u << 10);
	struct stat sb {};
	REQUIRE(stat(tf.path.c_str(), &sb) == 0);
	CHECK(static_cast<uint64_t>(sb.st_size) == 16u << 20);
	CHECK(static_cast<uint64_t>(sb.st_blocks) * 512 < (1u << 20));  // sparse

	io_uring ring{};
	auto q = (*dev)->open_queue(ring);
	REQUIRE(q.ok());
	std::vector<uint8_t> out(8 * 4096), in(8 * 4096);
	for (size_t i = 0; i < out.size(); i++)
		out[i] = static_cast<uint8_t>(i * 7 + 3);
	CHECK(io(**q, nvme::IoOp::write, 2, 100, 8, out.data()) == 0);
	CHECK(io(**q, nvme::IoOp::read, 0, 100, 8, in.data()) == 0);
	CHECK(in == out);
	CHECK(io(**q, nvme::IoOp::flush, 0, 0, 0, nullptr) == 0);
	CHECK(io(**q, nvme::IoOp::deallocate, 0, 102, 2, nullptr) == 0);
	CHECK(io(**q, nvme::IoOp::read, 0, 100, 8, in.data()) == 0);
	for (size_t i = 0; i < in.size(); i++) {
		const bool trimmed = i >= 2 * 4096 && i < 4 * 4096;
		if (in[i] != (trimmed ? 0 : out[i])) {
			FAIL("byte " << i << " reads " << int(in[i]));
			break;
		}
	}
	// Errors a drive would give.
	CHECK(io(**q, nvme::IoOp::write, 0, info.nlb, 1, out.data()) == 0x4080);
	CHECK(io(**q, nvme::IoOp::read, 0, 0, 1, nullptr) == -EINVAL);
	CHECK(io(**q, nvme::IoOp::read, 0, 0, 1024, in.data()) == -EINVAL);  // over max transfer
}

TEST_CASE("model device: RUH Status and the FDP logs are a drive's bytes")
{
	Opened m;
	std::vector<uint8_t> buf(16 * 4096, 0xAB);
	REQUIRE(io(*m.q, nvme::IoOp::write, 2, 0, 16, buf.data()) == 0);
	REQUIRE(io(*m.q, nvme::IoOp::write, 1, 16, 3, buf.data()) == 0);

	auto hs = m.dev->handles();
	REQUIRE(hs.ok());
	REQUIRE(hs->size() == 4);
	const uint64_t ru_lbas = (256u << 10) / 4096;
	for (uint16_t h = 0; h < 4; h++) {
		CHECK((*hs)[h].index == h);
		CHECK((*hs)[h].pid == h);
		CHECK((*hs)[h].ruhid == h);
	}
	CHECK((*hs)[0].ruamw == ru_lbas);
	CHECK((*hs)[1].ruamw == ru_lbas - 3);
	CHECK((*hs)[2].ruamw == ru_lbas - 16);
	CHECK((*hs)[2].ruht == nvme::kRuhtPersistentlyIsolated);
	CHECK((*hs)[3].ruht == nvme::kRuhtInitiallyIsolated);

	auto cl = m.dev->log_page(nvme::kLidFdpConfigs);
	REQUIRE(cl.ok());
	auto cfgs = nvme::parse_fdp_configs(*cl);
	REQUIRE(cfgs.ok());
	REQUIRE(cfgs->configs.size() == 1);
	const nvme::FdpConfig &c = cfgs->configs[0];
	CHECK(c.valid);
	CHECK(c.nrg == 1);
	CHECK(c.nruh == 4);
	CHECK(c.runs == 256u << 10);
	REQUIRE(c.ruht.size() == 4);
	CHECK(c.ruht[2] == nvme::kRuhtPersistentlyIsolated);

	auto ul = m.dev->log_page(nvme::kLidRuhUsage);
	REQUIRE(ul.ok());
	auto ruha = nvme::parse_ruh_usage(*ul);
	REQUIRE(ruha.ok());
	REQUIRE(ruha->size() == 4);
	CHECK((*ruha)[0] == nvme::kRuhaUnused);
	CHECK((*ruha)[1] == nvme::kRuhaHostSpecified);
	CHECK((*ruha)[2] == nvme::kRuhaHostSpecified);

	auto sl = m.dev->log_page(nvme::kLidFdpStats);
	REQUIRE(sl.ok());
	CHECK(sl->size() == sizeof(nvme::FdpStatsLog));
	auto stats = nvme::parse_fdp_stats(*sl);
	REQUIRE(stats.ok());
	CHECK(stats->hbmw == 19 * 4096);
	CHECK(stats->mbmw == 19 * 4096);
	CHECK(stats->mbe == 0);

	// A handle past the last one: the write lands on handle 0 and a host event says so.
	REQUIRE(io(*m.q, nvme::IoOp::write, 9, 40, 1, buf.data()) == 0);
	hs = m.dev->handles();
	REQUIRE(hs.ok());
	CHECK((*hs)[0].ruamw == ru_lbas - 1);
	auto el = m.dev->log_page(nvme::kLidFdpEvents, nvme::kLspFdpHostEvents);
	REQUIRE(el.ok());
	CHECK(el->size() == 4096);
	auto ev = nvme::parse_fdp_events(*el);
	REQUIRE(ev.ok());
	REQUIRE(ev->size() == 1);
	CHECK((*ev)[0].type == nvme::kFdpEventInvalidPid);
	CHECK((*ev)[0].pid == 9);
	auto ctrl = m.dev->log_page(nvme::kLidFdpEvents, 0);
	REQUIRE(ctrl.ok());
	auto cev = nvme::parse_fdp_events(*ctrl);
	REQUIRE(cev.ok());
	CHECK(cev->empty());
	CHECK_FALSE(m.dev->log_page(0x02).ok());
}

TEST_CASE("model device: RUH Update closes the handle's open RU; the next write opens a fresh one")
{
	const uint64_t ru_lbas = (256u << 10) / 4096;
	std::vector<uint8_t> buf(16 * 4096, 0xCD);
	TempFile tf;
	auto d = model::open_model_device(options(tf.path));
	REQUIRE(d.ok());
	nvme::Device &dev = **d;
	io_uring ring{};
	{
		auto q = dev.open_queue(ring);
		REQUIRE(q.ok());
		REQUIRE(io(**q, nvme::IoOp::write, 1, 0, 5, buf.data()) == 0);
		REQUIRE(io(**q, nvme::IoOp::write, 2, 5, 7, buf.data()) == 0);
		// With a queue open, the queue applies the update before its next I/O.
		const uint16_t one[] = {1};
		REQUIRE(dev.ruh_update(one).ok());
		REQUIRE(io(**q, nvme::IoOp::read, 0, 0, 1, buf.data()) == 0);
		auto hs = dev.handles();
		REQUIRE(hs.ok());
		CHECK((*hs)[1].ruamw == ru_lbas);
		CHECK((*hs)[2].ruamw == ru_lbas - 7);
		// The next write on handle 1 starts a fresh RU.
		REQUIRE(io(**q, nvme::IoOp::write, 1, 12, 2, buf.data()) == 0);
		hs = dev.handles();
		REQUIRE(hs.ok());
		CHECK((*hs)[1].ruamw == ru_lbas - 2);
	}
	// With no queue open, the update is applied at once.
	const uint16_t two[] = {1, 2};
	REQUIRE(dev.ruh_update(two).ok());
	auto hs = dev.handles();
	REQUIRE(hs.ok());
	CHECK((*hs)[1].ruamw == ru_lbas);
	CHECK((*hs)[2].ruamw == ru_lbas);
	// A handle that has no open RU, and handle 0 untouched: no change, no error.
	const uint16_t zero[] = {0};
	CHECK(dev.ruh_update(zero).ok());
	// An index past the last handle is an error that names it; nothing changes.
	const uint16_t bad[] = {2, 4};
	auto r = dev.ruh_update(bad);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().message().find("no handle 4") != std::string::npos);
	// The data written before the updates reads back, and the FTL is consistent.
	auto q = dev.open_queue(ring);
	REQUIRE(q.ok());
	std::vector<uint8_t> rd(7 * 4096);
	REQUIRE(io(**q, nvme::IoOp::read, 0, 5, 7, rd.data()) == 0);
	CHECK(rd == std::vector<uint8_t>(7 * 4096, 0xCD));
}

TEST_CASE("ftl: ruh_update closes only the named handle's RU; GC can reclaim the closed RU")
{
	model::ModelConfig c;
	c.logical_bytes = 16u << 20;
	c.ru_size = 256u << 10;
	c.nruh = 4;
	c.op = 0.25;
	auto f = model::Ftl::create(c);
	REQUIRE(f.ok());
	model::Ftl &ftl = **f;
	const uint64_t ru_lbas = (256u << 10) / 4096;
	REQUIRE(ftl.write(0, 0, 3) == 0);
	REQUIRE(ftl.write(3, 100, 4) == 0);
	CHECK(ftl.ruh_update(0) == 0);
	CHECK(ftl.ruamw(0) == ru_lbas);
	CHECK(ftl.ruamw(3) == ru_lbas - 4);
	CHECK(ftl.ru_counts(0).full == 1);
	CHECK(ftl.ruh_update(4) == -EINVAL);
	REQUIRE(ftl.check_invariants().ok());
	// Many updates after small writes strand many partial RUs; GC still makes room and
	// the host can keep writing the whole logical space.
	const uint64_t nlb = ftl.logical_lbas();
	for (int round = 0; round < 3; round++)
		for (uint64_t lba = 0; lba < nlb; lba += 8) {
			REQUIRE(ftl.write(1, lba, 8) == 0);
			if (lba % 64 == 0)
				REQUIRE(ftl.ruh_update(1) == 0);
		}
	REQUIRE(ftl.check_invariants().ok());
	CHECK(ftl.stats().gc_runs > 0);
}

TEST_CASE("model device: WAF from the statistics log after overwrites is above 1")
{
	Opened m;
	const uint64_t nlb = m.dev->info().nlb;
	std::vector<uint8_t> buf(4096, 1);
	uint64_t x = 12345;
	for (uint64_t i = 0; i < 4 * nlb; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		const uint64_t lba = i < nlb ? i : (x >> 33) % nlb;
		REQUIRE(io(*m.q, nvme::IoOp::write, 0, lba, 1, buf.data()) == 0);
	}
	auto sl = m.dev->log_page(nvme::kLidFdpStats);
	REQUIRE(sl.ok());
	auto stats = nvme::parse_fdp_stats(*sl);
	REQUIRE(stats.ok());
	CHECK(stats->hbmw == 4 * nlb * 4096);
	CHECK(stats->mbmw > stats->hbmw);
	CHECK(stats->mbe > 0);
	CHECK(stats->mbe % (256u << 10) == 0);
}

// Reads the controller events (log 0x23, LSP 0) newer than *seen: their LBAs moved by PID.
void take_relocations(nvme::Device &dev, uint64_t *seen, uint64_t *lbas_by_pid, size_t npid)
{
	auto el = dev.log_page(nvme::kLidFdpEvents, 0);
	REQUIRE(el.ok());
	auto ev = nvme::parse_fdp_events(*el);
	REQUIRE(ev.ok());
	for (const nvme::FdpEvent &e : *ev) {
		const uint64_t t = nvme::fdp_event_time(e);
		if (t <= *seen)
			continue;
		CHECK(t == *seen + 1);  // the model's clock: one tick per event, none skipped
		*seen = t;
		CHECK(e.type == nvme::kFdpEventMediaReallocated);
		CHECK((e.flags & nvme::kFdpEventFlagPiv) != 0);
		CHECK(e.nsid == 1);
		CHECK(e.ruhid == e.pid);  // one reclaim group: the PID is the RUH
		REQUIRE(e.pid < npid);
		CHECK(nvme::fdp_event_nlbam(e) > 0);
		lbas_by_pid[e.pid] += nvme::fdp_event_nlbam(e);
	}
}

TEST_CASE("model device: GC's copies are Media Reallocated events with the handle's PID and NLBAM")
{
	Opened m;
	const uint64_t nlb = m.dev->info().nlb;
	std::vector<uint8_t> buf(4096, 1);
	// Handle 0 fills the lower half once (its RUs stay whole); handle 1 churns the upper half.
	for (uint64_t lba = 0; lba < nlb / 2; lba++)
		REQUIRE(io(*m.q, nvme::IoOp::write, 0, lba, 1, buf.data()) == 0);
	uint64_t seen = 0, lbas[4] = {};
	uint64_t x = 777;
	for (uint64_t i = 0; i < 3 * nlb; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		const uint64_t lba = nlb / 2 + (x >> 33) % (nlb / 2);
		REQUIRE(io(*m.q, nvme::IoOp::write, 1, lba, 1, buf.data()) == 0);
		take_relocations(*m.dev, &seen, lbas, 4);
	}
	auto sl = m.dev->log_page(nvme::kLidFdpStats);
	REQUIRE(sl.ok());
	auto stats = nvme::parse_fdp_stats(*sl);
	REQUIRE(stats.ok());
	REQUIRE(stats->mbmw > stats->hbmw);
	// The events are handle 1's; the GC stream's own later copies belong to no handle
	// (model::HandleStats) and raise none.
	CHECK(lbas[1] > 0);
	CHECK(nvme::u128{lbas[1]} * 4096 <= stats->mbmw - stats->hbmw);
	CHECK(lbas[0] == 0);
	CHECK(lbas[2] + lbas[3] == 0);
	// The log keeps the newest kFdpEventsMax, oldest first; host events are apart.
	REQUIRE(seen > nvme::kFdpEventsMax);
	auto el = m.dev->log_page(nvme::kLidFdpEvents, 0);
	REQUIRE(el.ok());
	auto ev = nvme::parse_fdp_events(*el);
	REQUIRE(ev.ok());
	REQUIRE(ev->size() == nvme::kFdpEventsMax);
	CHECK(nvme::fdp_event_time(ev->front()) == seen - nvme::kFdpEventsMax + 1);
	CHECK(nvme::fdp_event_time(ev->back()) == seen);
	auto host = m.dev->log_page(nvme::kLidFdpEvents, nvme::kLspFdpHostEvents);
	REQUIRE(host.ok());
	auto hev = nvme::parse_fdp_events(*host);
	REQUIRE(hev.ok());
	CHECK(hev->empty());
}

TEST_CASE("model device: one I/O queue at a time; the next one carries on the same FTL")
{
	Opened m;
	std::vector<uint8_t> buf(4096, 2);
	REQUIRE(io(*m.q, nvme::IoOp::write, 1, 0, 1, buf.data()) == 0);
	auto second = m.dev->open_queue(m.ring);
	REQUIRE_FALSE(second.ok());
	CHECK(second.error().code == std::errc::device_or_resource_busy);
	CHECK(second.error().message().find("--queues 1") != std::string::npos);
	CHECK(second.error().message().find("busy") == std::string::npos);  // no errno text
	m.q.reset();
	auto third = m.dev->open_queue(m.ring);
	REQUIRE(third.ok());
	REQUIRE(io(**third, nvme::IoOp::write, 1, 1, 1, buf.data()) == 0);
	auto hs = m.dev->handles();
	REQUIRE(hs.ok());
	CHECK((*hs)[1].ruamw == (256u << 10) / 4096 - 2);
}

TEST_CASE("model device: logs read on another thread are consistent, final figures exact")
{
	TempFile tf;
	const model::ModelDeviceOptions o = options(tf.path);
	auto dev = model::open_model_device(o);
	REQUIRE(dev.ok());
	auto ref = model::Ftl::create(o.config);  // the same writes, straight into an FTL
	REQUIRE(ref.ok());
	io_uring ring{};
	auto q = (*dev)->open_queue(ring);
	REQUIRE(q.ok());
	const uint64_t nlb = (*dev)->info().nlb;
	std::atomic<bool> done{false};
	uint64_t reads = 0, torn = 0, backwards = 0;
	std::thread reader([&] {
		uint64_t last = 0;
		do {
			nvme::FdpStats st{};
			bool good = false;
			if (auto sl = (*dev)->log_page(nvme::kLidFdpStats); sl.ok())
				if (auto p = nvme::parse_fdp_stats(*sl); p.ok()) {
					st = *p;
					good = true;
				}
			good = good && (*dev)->handles().ok();
			if (!good || st.mbmw < st.hbmw || st.hbmw % 4096)
				torn++;
			else if (static_cast<uint64_t>(st.hbmw) < last)
				backwards++;
			else
				last = static_cast<uint64_t>(st.hbmw);
			reads++;
		} while (!done.load(std::memory_order_acquire));
	});
	std::vector<uint8_t> buf(4096, 3);
	uint64_t x = 99;
	int bad = 0;
	for (uint64_t i = 0; i < 3 * nlb; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		const uint64_t lba = i < nlb ? i : (x >> 33) % nlb;
		const uint16_t h = static_cast<uint16_t>((x >> 20) % 4);
		bad |= io(**q, nvme::IoOp::write, h, lba, 1, buf.data());
		bad |= (*ref)->write(h, lba, 1);
	}
	done.store(true, std::memory_order_release);
	reader.join();
	REQUIRE(bad == 0);
	CHECK(reads > 0);
	CHECK(torn == 0);
	CHECK(backwards == 0);
	auto sl = (*dev)->log_page(nvme::kLidFdpStats);
	REQUIRE(sl.ok());
	auto st = nvme::parse_fdp_stats(*sl);
	REQUIRE(st.ok());
	CHECK(st->hbmw == (*ref)->stats().host_bytes);
	CHECK(st->mbmw == (*ref)->stats().media_bytes);
	CHECK(st->mbe == (*ref)->stats().erased_bytes);
	CHECK(st->mbmw > st->hbmw);
	auto hs = (*dev)->handles();
	REQUIRE(hs.ok());
	for (uint16_t h = 0; h < 4; h++)
		CHECK((*hs)[h].ruamw == (*ref)->ruamw(h));
}

TEST_CASE("model device: bad options are errors that say what to fix")
{
	model::ModelDeviceOptions o;
	auto r = model::open_model_device(o);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().context.find("data file") != std::string::npos);
	TempFile tf;
	o = options(tf.path);
	o.config.op = -1;
	r = model::open_model_device(o);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().context.find("over-provisioning") != std::string::npos);
}
