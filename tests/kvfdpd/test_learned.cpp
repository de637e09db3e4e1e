// kvfdpd's learned placement (kvfdpd/daemon/learned.*) on the FDP SSD model: two writers
// with different turnover end up on two handles, the state file resumes the map, a handle
// the learner stops using (or a reload's pin takes or leaves) is closed with RUH Update, a
// refused RUH Update is counted, and the data path allocates nothing.
#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "nvme/backends.hpp"
#include "model/ftl/model_device.hpp"
#include "proto/metrics.hpp"
#include "proto/policy_reply.hpp"
#include "tests/kvfdpd/bench_rig.hpp"
#include "tests/model/ftl/model_io.hpp"
#include "tests/kvfdpd/learned_model.hpp"
#include "tests/support/temp_files.hpp"
#include "kvfdpd/daemon/learned.hpp"
#include "kvfdpd/daemon/writers.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;
using nlohmann::json;

namespace {

using kvfdp::test::TempPath;

constexpr uint32_t kLba = 4096;
constexpr uint64_t kMiB = 1 << 20;
constexpr uint32_t kEngine = 101, kStaging = 202;  // two cgroup writers

std::unique_ptr<nvme::Device> make_model(const std::string &data)
{
	return test::learned_model(data, 256 * kMiB);
}

// Writes 8 LBAs at slba through handle h on a queue of its own, closed again at once, so an
// RUH Update sent next lands at once.
void write8(nvme::Device &dev, uint16_t h, uint64_t slba)
{
	std::vector<uint8_t> buf(8 * kLba, 0x5A);
	io_uring ring{};
	auto q = dev.open_queue(ring);
	REQUIRE(q.ok());
	REQUIRE(test::model_io(**q, nvme::IoOp::write, h, slba, 8, buf.data()) == 0);
}

// Handle h's RUAMW (LBAs left in its open RU) from RUH Status.
uint64_t ruamw(nvme::Device &dev, uint16_t h)
{
	auto hs = dev.handles();
	REQUIRE(hs.ok());
	return (*hs)[h].ruamw;
}

// What the queues would do for a host with a long-lived store and a staging area: the
// engine fills [0, 128 MiB) and then rewrites it in turn, 1 MiB per 4 MiB of staging writes
// (its data lives about 640 MiB of device writes); staging writes 1 MiB files in
// [160, 224) MiB and discards each 4 MiB of writes later. The learner regroups every
// `regroup` MiB written.
void drive(LearnedPlacement &lp, uint64_t staging_mib, uint64_t regroup_mib, uint64_t *engine_done)
{
	const uint32_t per = kMiB / kLba;
	uint64_t written = 0;
	auto wrote = [&] {
		if (++written % regroup_mib == 0)
			(void)lp.recompute_now();
	};
	for (uint64_t i = 0; i < staging_mib; i++) {
		if (*engine_done < 128 || i % 4 == 0) {
			(void)lp.place(kEngine, KVFDP_CLASS_NOT_SET, (*engine_done % 128) * per,
				       per);
			(*engine_done)++;
			wrote();
		}
		const uint64_t slot = 160 + i % 64;
		(void)lp.place(kStaging, KVFDP_CLASS_NOT_SET, slot * per, per);
		wrote();
		if (i >= 4)
			lp.discard((160 + (i - 4) % 64) * per, per);
	}
	(void)lp.recompute_now();
}

// After drive(): the staging writer stops and its data is discarded; the engine alone
// rewrites its store, regrouping every 16 MiB, until a recompute drops a handle or
// max_mib is written. Returns the handles that recompute abandoned.
// closes, if given, counts the handles the regroups asked to close (a paused group's, before
// it is merged, among them).
std::vector<uint16_t> staging_stops(LearnedPlacement &lp, uint64_t *engine_done, uint64_t max_mib,
				    uint64_t *closes = nullptr)
{
	const uint32_t per = kMiB / kLba;
	lp.discard(160 * per, 64 * per);
	for (uint64_t i = 1; i <= max_mib; i++) {
		(void)lp.place(kEngine, KVFDP_CLASS_NOT_SET, (*engine_done % 128) * per, per);
		(*engine_done)++;
		if (i % 16 == 0) {
			const placement::RecomputeResult r = lp.recompute_now();
			if (closes)
				*closes += r.to_close().size();
			if (!r.abandoned.empty())
				return r.abandoned;
		}
	}
	return {};
}

// The kvfdp_learned_* text of lp, as kvfdpd's metrics render it.
std::string learned_text(const LearnedPlacement &lp, WriterNames &names)
{
	return proto::render_metrics(proto::learned_families(lp.policy(names)));
}

std::map<uint32_t, uint16_t> handles_by_writer(const json &p)
{
	std::map<uint32_t, uint16_t> m;
	for (const json &k : p["keys"])
		m[k["writer_id"].get<uint32_t>()] = k["handle"].get<uint16_t>();
	return m;
}

}  // namespace

TEST_CASE(
	"learned placement: two writers with different turnover get two handles; a restart resumes")
{
	TempPath data("kvfdp-learned-data"), state("kvfdp-learned-state");
	auto dev = make_model(data.path);
	WriterNames names;
	LearnedOptions o;
	o.state_path = state.path;
	std::map<uint32_t, uint16_t> learned;
	{
		auto lp = LearnedPlacement::create(*dev, 4, o);
		uint64_t engine = 0;
		drive(*lp, 1024, 16, &engine);
		const json p = lp->policy_json(names);
		INFO(p.dump(1));
		CHECK(p["groups"].get<uint32_t>() >= 2);
		CHECK(p["grouping"] == "measured");  // the two writers keep their ids
		learned = handles_by_writer(p);
		REQUIRE(learned.count(kEngine));
		REQUIRE(learned.count(kStaging));
		CHECK(learned[kEngine] != learned[kStaging]);
		// The staging writer's data died young, the engine's did not.
		for (const json &k : p["keys"])
			if (k["writer_id"] == kStaging)
				CHECK(k["died_bytes"].get<uint64_t>() >= 1000 * kMiB);
		CHECK(lp->place(kStaging, KVFDP_CLASS_NOT_SET, 300 * (kMiB / kLba), 1) ==
		      learned[kStaging]);
		lp->stop();
	}
	std::ifstream saved(state.path);
	REQUIRE(saved.good());
	// A new kvfdpd on the same state: the same keys on the same handles before any write.
	auto lp2 = LearnedPlacement::create(*dev, 4, o);
	const json p2 = lp2->policy_json(names);
	CHECK(handles_by_writer(p2) == learned);
	CHECK(p2["groups"] == 2);
	CHECK(lp2->place(kEngine, KVFDP_CLASS_NOT_SET, 0, 1) == learned[kEngine]);
	CHECK(lp2->place(kStaging, KVFDP_CLASS_NOT_SET, 170 * (kMiB / kLba), 1) ==
	      learned[kStaging]);
}

TEST_CASE(
	"learned placement: a writer that stops is merged away and its handle's RU closed with RUH Update")
{
	TempPath data("kvfdp-learned-data");
	auto dev = make_model(data.path);
	auto lp = LearnedPlacement::create(*dev, 4, LearnedOptions{});
	uint64_t engine = 0;
	drive(*lp, 1024, 16, &engine);
	const uint16_t he = lp->place(kEngine, KVFDP_CLASS_NOT_SET, 0, 1);
	const uint16_t hs = lp->place(kStaging, KVFDP_CLASS_NOT_SET, 160 * (kMiB / kLba), 1);
	REQUIRE(he != hs);
	const uint64_t updates_before = lp->ruh_updates();
	// Real writes through both handles, so each has a partly written RU open.
	const uint64_t ru_lbas = kMiB / kLba;
	write8(*dev, he, 0);
	write8(*dev, hs, 160 * ru_lbas);
	REQUIRE(ruamw(*dev, hs) == ru_lbas - 8);

	const std::vector<uint16_t> abandoned = staging_stops(*lp, &engine, 2048);
	REQUIRE(abandoned.size() == 1);
	CHECK(abandoned[0] == hs);
	CHECK(lp->ruh_updates() >= updates_before + 1);
	CHECK(lp->ruh_updates() >= 1);
	CHECK(lp->ruh_update_refused() == 0);
	// The model closed the staging handle's RU (the next write opens a fresh one) and left
	// the engine's alone.
	CHECK(ruamw(*dev, hs) == ru_lbas);
	CHECK(ruamw(*dev, he) == ru_lbas - 8);
	CHECK(lp->place(kStaging, KVFDP_CLASS_NOT_SET, 160 * ru_lbas, 1) == he);
	WriterNames names;
	const json p = lp->policy_json(names);
	INFO(p.dump(1));
	CHECK(p["groups"] == 1);
	CHECK(p["ruh_updates"].get<uint64_t>() >= 1);
	CHECK(learned_text(*lp, names)
		      .find("kvfdp_ruh_updates_total " + std::to_string(lp->ruh_updates()) +
			    "\n") != std::string::npos);
}

TEST_CASE("learned placement: writers replaced at every regroup are grouped by class, and the "
	  "policy and the metrics say so")
{
	TempPath data("kvfdp-learned-data");
	auto dev = make_model(data.path);
	WriterNames names;
	auto lp = LearnedPlacement::create(*dev, 4, LearnedOptions{});
	REQUIRE(lp);
	CHECK(lp->policy_json(names)["grouping"] == "measured");
	// A SHORT writer restarted under a new id every 16 MiB of writes, as a service without a
	// stable identity is; its old ids' data goes on dying 64 MiB after it was written.
	const uint32_t per = kMiB / kLba;
	uint64_t mib = 0;
	for (uint32_t r = 0; r < 16; r++) {
		for (int i = 0; i < 16; i++, mib++) {
			(void)lp->place(1000 + r, KVFDP_CLASS_SHORT, (mib % 128) * per, per);
			if (mib >= 64)
				lp->discard(((mib - 64) % 128) * per, per);
		}
		(void)lp->recompute_now();
	}
	const json p = lp->policy_json(names);
	INFO(p.dump(1));
	CHECK(p["grouping"] == "by_class");
	CHECK(learned_text(*lp, names).find("\nkvfdp_learned_grouping_by_class 1\n") !=
	      std::string::npos);
	lp->stop();
}

TEST_CASE("learned placement: a handle handed from one group to another is closed with RUH Update")
{
	// Two handles for the learner: when the engine stops and a third, shorter-lived writer
	// starts, one regroup hands the engine's handle to the newcomer (staging keeps the other).
	TempPath data("kvfdp-learned-data");
	auto dev = make_model(data.path);
	auto lp = LearnedPlacement::create(*dev, 2, LearnedOptions{});
	const uint32_t per = kMiB / kLba;
	constexpr uint32_t kScratch = 303;
	uint64_t engine = 0;
	drive(*lp, 1024, 16, &engine);
	const uint16_t hs = lp->place(kStaging, KVFDP_CLASS_NOT_SET, 160 * per, 1);
	const uint16_t he = lp->place(kEngine, KVFDP_CLASS_NOT_SET, 0, 1);
	REQUIRE(hs == 0);
	REQUIRE(he == 1);
	write8(*dev, he, 0);
	const uint64_t updates_before = lp->ruh_updates();
	// The engine stops and its store is discarded; staging (3 MiB a round, 4 MiB lifetime)
	// and scratch (2 MiB a round, each 1 MiB discarded once the next is written) write 512 MiB
	// with no regroup in between.
	lp->discard(0, 128 * per);
	for (uint64_t i = 0; i < 100; i++) {
		for (uint64_t k = 0; k < 3; k++) {
			const uint64_t n = 3 * i + k;
			(void)lp->place(kStaging, KVFDP_CLASS_NOT_SET, (160 + n % 64) * per, per);
			if (n >= 4)
				lp->discard((160 + (n - 4) % 64) * per, per);
		}
		for (uint64_t k = 0; k < 2; k++) {
			const uint64_t n = 2 * i + k;
			REQUIRE(lp->place(kScratch, KVFDP_CLASS_NOT_SET, (128 + n % 32) * per,
					  per) == hs);
			if (n >= 1)
				lp->discard((128 + (n - 1) % 32) * per, per);
		}
	}
	const placement::RecomputeResult r = lp->recompute_now();
	CHECK(r.abandoned.empty());
	REQUIRE(r.remapped.size() == 1);
	CHECK(r.remapped[0] == he);
	CHECK(lp->place(kScratch, KVFDP_CLASS_NOT_SET, 128 * per, 1) == he);
	CHECK(lp->place(kStaging, KVFDP_CLASS_NOT_SET, 160 * per, 1) == hs);
	CHECK(lp->ruh_updates() == updates_before + 1);
	// The RU holding the engine's data was closed before the newcomer writes there.
	CHECK(ruamw(*dev, he) == kMiB / kLba);
}

TEST_CASE(
	"learned placement: a reload that pins a writer to a learned handle, then drops it, closes its RU")
{
	TempPath data("kvfdp-learned-data");
	auto dev = make_model(data.path);
	auto lp = LearnedPlacement::create(*dev, 4, LearnedOptions{});
	const uint64_t ru_lbas = kMiB / kLba;
	uint64_t engine = 0;
	drive(*lp, 1024, 16, &engine);
	const uint16_t he = lp->place(kEngine, KVFDP_CLASS_NOT_SET, 0, 1);
	const uint16_t hs = lp->place(kStaging, KVFDP_CLASS_NOT_SET, 160 * ru_lbas, 1);
	REQUIRE(he != hs);
	// Staging has a partly written RU open on hs; a reload pins the logs writer there.
	write8(*dev, hs, 160 * ru_lbas);
	REQUIRE(ruamw(*dev, hs) == ru_lbas - 8);
	const uint64_t updates_before = lp->ruh_updates();
	placement::Policy p;
	p.nruh = 4;
	placement::WriterRule w;
	w.name = "logs";
	w.dir = "/mnt/kv/logs";
	w.handle = hs;
	p.config.writers.push_back(w);
	lp->set_policy(p);
	const placement::RecomputeResult r = lp->recompute_now();
	CHECK(std::find(r.remapped.begin(), r.remapped.end(), hs) != r.remapped.end());
	CHECK(lp->ruh_updates() == updates_before + r.abandoned.size() + r.remapped.size());
	CHECK(lp->ruh_updates() > updates_before);
	CHECK(lp->ruh_update_refused() == 0);
	CHECK(ruamw(*dev, hs) == ru_lbas);  // staging's RU closed before the logs writer fills it
	CHECK(lp->place(kStaging, KVFDP_CLASS_NOT_SET, 161 * ru_lbas, 1) != hs);
	const uint32_t logs = named_writer_id(0);
	CHECK(lp->place(logs, KVFDP_CLASS_NOT_SET, 230 * ru_lbas, 8) == hs);
	write8(*dev, hs, 230 * ru_lbas);
	REQUIRE(ruamw(*dev, hs) == ru_lbas - 8);
	// A reload drops the pin: the logs writer's open RU on hs is closed too.
	const uint64_t updates_mid = lp->ruh_updates();
	lp->set_policy(placement::Policy{});
	const placement::RecomputeResult r2 = lp->recompute_now();
	CHECK(std::find(r2.abandoned.begin(), r2.abandoned.end(), hs) != r2.abandoned.end());
	CHECK(lp->ruh_updates() == updates_mid + r2.to_close().size());
	CHECK(lp->ruh_updates() > updates_mid);
	CHECK(ruamw(*dev, hs) == ru_lbas);
	CHECK(lp->place(logs, KVFDP_CLASS_NOT_SET, 231 * ru_lbas, 1) != hs);
}

TEST_CASE("learned placement: a drive that refuses RUH Update is counted and keeps placing")
{
	TempPath data("kvfdp-learned-file");
	nvme::FileDeviceOptions fo;
	fo.lba_size = kLba;
	fo.size_bytes = 256 * kMiB;
	fo.nruh = 4;
	auto dev = nvme::open_file_device(data.path, fo);  // RUH Update: ENOTSUP
	REQUIRE(dev.ok());
	auto lp = LearnedPlacement::create(**dev, 4, LearnedOptions{});
	uint64_t engine = 0;
	drive(*lp, 1024, 16, &engine);
	const uint16_t he = lp->place(kEngine, KVFDP_CLASS_NOT_SET, 0, 1);
	REQUIRE(he != lp->place(kStaging, KVFDP_CLASS_NOT_SET, 160 * (kMiB / kLba), 1));

	uint64_t closes = 0;
	const std::vector<uint16_t> abandoned = staging_stops(*lp, &engine, 2048, &closes);
	REQUIRE(abandoned.size() == 1);
	CHECK(closes >= 1);
	CHECK(lp->ruh_update_refused() == closes);  // each one refused and counted
	CHECK(lp->ruh_updates() == 0);
	// The handle stays open, and placement goes on: valid handles, the engine's unchanged.
	for (uint32_t w : {kEngine, kStaging, 303u}) {
		const uint16_t h = lp->place(w, KVFDP_CLASS_NOT_SET, 0, 1);
		CHECK(h < 4);
		CHECK(h == he);
	}
	closes += lp->recompute_now().to_close().size();
	CHECK(lp->place(kEngine, KVFDP_CLASS_NOT_SET, 8, 1) == he);
	WriterNames names;
	const json p = lp->policy_json(names);
	CHECK(p["ruh_update_refused"] == closes);
	CHECK(learned_text(*lp, names)
		      .find("kvfdp_ruh_update_refused_total " + std::to_string(closes) + "\n") !=
	      std::string::npos);
}

TEST_CASE("learned placement: a corrupt state file is discarded and learning starts from one group")
{
	TempPath data("kvfdp-learned-data"), state("kvfdp-learned-state");
	std::ofstream(state.path) << "not a learner state\n";
	auto dev = make_model(data.path);
	LearnedOptions o;
	o.state_path = state.path;
	auto lp = LearnedPlacement::create(*dev, 4, o);
	WriterNames names;
	CHECK(lp->policy_json(names)["keys"].empty());
	const uint16_t h1 = lp->place(kEngine, KVFDP_CLASS_NOT_SET, 0, 1);
	const uint16_t h2 = lp->place(kStaging, KVFDP_CLASS_NOT_SET, 8, 1);
	CHECK(h1 == h2);  // one group, as `none`
}

TEST_CASE("learned placement: a fixed handle from the config wins over what is measured")
{
	TempPath data("kvfdp-learned-data");
	auto dev = make_model(data.path);
	auto lp = LearnedPlacement::create(*dev, 4, LearnedOptions{});
	placement::Policy p;
	p.nruh = 4;
	placement::WriterRule w;
	w.name = "logs";
	w.dir = "/mnt/kv/logs";
	w.handle = 3;
	p.config.writers.push_back(w);
	p.config.handle[KVFDP_CLASS_EXTREME] = 2;
	lp->set_policy(p);
	CHECK(lp->place(named_writer_id(0), KVFDP_CLASS_NOT_SET, 0, 1) == 3);
	CHECK(lp->place(kEngine, KVFDP_CLASS_EXTREME, 8, 1) == 2);
	(void)lp->recompute_now();
	CHECK(lp->place(named_writer_id(0), KVFDP_CLASS_SHORT, 16, 1) == 3);
	(void)lp->recompute_now();
	WriterNames names;
	names.set_config(p.config);
	const json j = lp->policy_json(names);
	bool seen = false;
	for (const json &k : j["keys"])
		if (k["writer_id"] == named_writer_id(0)) {
			CHECK(k["pinned"] == true);
			CHECK(k["writer"] == "logs");
			seen = true;
		}
	CHECK(seen);
	const std::string m = learned_text(*lp, names);
	CHECK(m.find("kvfdp_learned_lifetime_bytes{writer=\"logs\",class=\"not_set\",handle=\"3\"}") !=
	      std::string::npos);
	CHECK(m.find("kvfdp_ruh_updates_total ") != std::string::npos);
}

TEST_CASE("learned placement: place and discard allocate nothing")
{
	TempPath data("kvfdp-learned-data");
	auto dev = make_model(data.path);
	auto lp = LearnedPlacement::create(*dev, 4, LearnedOptions{});
	for (uint32_t w = 1; w <= 8; w++)
		(void)lp->place(w, KVFDP_CLASS_SHORT, w * 64, 16);  // first sight of each key
	const uint64_t before = test::allocation_count();
	uint16_t sink = 0;
	for (uint64_t i = 0; i < 100000; i++) {
		sink ^= lp->place(static_cast<uint32_t>(1 + i % 8), KVFDP_CLASS_SHORT,
				  (i * 16) % 60000, 16);
		if (i % 3 == 0)
			lp->discard((i * 16) % 60000, 16);
	}
	CHECK(test::allocation_count() == before);
	CHECK(sink < 4);
}

TEST_CASE("learned placement: the kvfdp_learned_* families' text, byte for byte")
{
	proto::LearnedPolicy l;
	l.groups = 2;
	l.grouping = "by_class";
	l.ruh_updates = 5;
	l.ruh_update_refused = 1;
	l.key_count = 2;
	l.max_keys = 4096;
	l.retired_keys = 7;
	l.overflow_bytes = 8192;
	proto::LearnedKey named;
	named.writer = "a\"b\\c\nd";  // quote and backslash escaped, the newline dropped
	named.cls = "short";
	named.handle = 3;
	named.lifetime_bytes = 1.5e9;
	named.lifetime_s = 0.25;
	named.write_share = 0.1;
	named.live_bytes = 4096;
	proto::LearnedKey unnamed;
	unnamed.cls = "not_set";
	l.keys = {named, unnamed};
	// The summary families first, then the per-key series (last: a bounded reply is cut
	// from its end).
	const char *want =
		R"txt(# HELP kvfdp_learned_groups Groups (handles the learner places on).
# TYPE kvfdp_learned_groups gauge
kvfdp_learned_groups 2
# HELP kvfdp_learned_grouping_by_class 1 while the learner groups by class: most writes come from writers replaced faster than they are measured.
# TYPE kvfdp_learned_grouping_by_class gauge
kvfdp_learned_grouping_by_class 1
# HELP kvfdp_ruh_updates_total Handles closed with RUH Update since start.
# TYPE kvfdp_ruh_updates_total counter
kvfdp_ruh_updates_total 5
# HELP kvfdp_ruh_update_refused_total Handles whose RUH Update the drive refused (left open).
# TYPE kvfdp_ruh_update_refused_total counter
kvfdp_ruh_update_refused_total 1
# HELP kvfdp_learned_keys Keys the learner's table holds (at most kvfdp_learned_max_keys).
# TYPE kvfdp_learned_keys gauge
kvfdp_learned_keys 2
# HELP kvfdp_learned_max_keys The learner's table's bound.
# TYPE kvfdp_learned_max_keys gauge
kvfdp_learned_max_keys 4096
# HELP kvfdp_learned_retired_keys_total Keys retired since start (idle for capacities of device writes).
# TYPE kvfdp_learned_retired_keys_total counter
kvfdp_learned_retired_keys_total 7
# HELP kvfdp_learned_overflow_bytes_total Bytes written while the learner's table was full (on the base handle, unlearned).
# TYPE kvfdp_learned_overflow_bytes_total counter
kvfdp_learned_overflow_bytes_total 8192
# HELP kvfdp_learned_lifetime_bytes Estimated lifetime of a placement key's data, in device bytes written.
# TYPE kvfdp_learned_lifetime_bytes gauge
kvfdp_learned_lifetime_bytes{writer="a\"b\\cd",class="short",handle="3"} 1500000000
kvfdp_learned_lifetime_bytes{writer="",class="not_set",handle="0"} 0
# HELP kvfdp_learned_lifetime_seconds The same lifetime in seconds at the recent write rate (0: unknown).
# TYPE kvfdp_learned_lifetime_seconds gauge
kvfdp_learned_lifetime_seconds{writer="a\"b\\cd",class="short",handle="3"} 0.25
kvfdp_learned_lifetime_seconds{writer="",class="not_set",handle="0"} 0
# HELP kvfdp_learned_write_share Decayed share of the device's writes.
# TYPE kvfdp_learned_write_share gauge
kvfdp_learned_write_share{writer="a\"b\\cd",class="short",handle="3"} 0.10000000000000001
kvfdp_learned_write_share{writer="",class="not_set",handle="0"} 0
# HELP kvfdp_learned_live_bytes Bytes written under the key and not yet died.
# TYPE kvfdp_learned_live_bytes gauge
kvfdp_learned_live_bytes{writer="a\"b\\cd",class="short",handle="3"} 4096
kvfdp_learned_live_bytes{writer="",class="not_set",handle="0"} 0
)txt";
	CHECK(proto::render_metrics(proto::learned_families(l)) == want);
}
