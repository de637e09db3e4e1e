// Unit tests of the slot-file engines' generators (model/workload/slots.hpp with the issue-36
// rebuild's options, model/workload/disk_tier.hpp: --workload kvbm and trtllm): slots are
// overwritten in place inside their file, nothing is deallocated, the fill and static tail
// come from their own writer, KVBM's filter holds blocks back, bad sizes name their option.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/workload/cli.hpp"
#include "model/workload/disk_tier.hpp"
#include "model/workload/slots.hpp"

using namespace kvfdp;
using namespace kvfdp::workload;

namespace {

constexpr uint64_t kCapacity = 64ull << 20;  // 64 MiB of 4 KiB LBAs
constexpr uint64_t kLbas = kCapacity / 4096;

// Records every write (LBA range, writer) and counts deallocations.
class RecordingSink : public sim::BlockSink {
public:
	struct Write {
		uint64_t slba, nlb, writer;
	};
	void write(uint64_t slba, uint64_t nlb, uint8_t, uint64_t writer) override
	{
		writes.push_back({slba, nlb, writer});
		if (!measuring)
			before_measurement++;
	}
	void deallocate(uint64_t, uint64_t) override { deallocs++; }
	void begin_measurement() override { measuring = true; }
	std::vector<Write> writes;
	uint64_t deallocs = 0, before_measurement = 0;
	bool measuring = false;
};

// How many times each LBA of [0, lbas) was written by writes[from, to).
std::vector<uint32_t> coverage(const std::vector<RecordingSink::Write> &w, size_t from, size_t to,
			       uint64_t lbas)
{
	std::vector<uint32_t> n(lbas, 0);
	for (size_t i = from; i < to; i++)
		for (uint64_t l = w[i].slba; l < w[i].slba + w[i].nlb && l < lbas; l++)
			n[l]++;
	return n;
}

SlotConfig rebuild_config()
{
	SlotConfig c;
	c.workers = default_slot_workers();
	const uint64_t writers[] = {1, 1, 2, 3, 3, 4, 4, 4, 5};
	for (size_t i = 0; i < c.workers.size(); i++)
		c.workers[i].writer = writers[i];
	c.fill_writer = true;
	c.static_tail = 0.11;
	c.warmup_writes = 0.25;
	c.measure_writes = 0.5;
	return c;
}

DiskTierConfig engine_config(DiskTierConfig::Engine e)
{
	DiskTierConfig c;
	c.engine = e;
	c.warmup_writes = 0.25;
	c.measure_writes = 0.5;
	return c;
}

}  // namespace

TEST_CASE("slots: the rebuild's fill covers the namespace once from its own writer, then the "
	  "workers overwrite only their windows and the static tail never dies")
{
	SlotWorkload wl(rebuild_config());
	RecordingSink sink;
	REQUIRE(wl.run(sim::Placement::hint, kLbas, 4096, sink, nullptr));
	CHECK(sink.deallocs == 0);
	// The fill: writer 6 (one above the workers' 1..5), in LBA order, first.
	size_t fill_end = 0;
	uint64_t next = 0;
	while (fill_end < sink.writes.size() && sink.writes[fill_end].writer == 6) {
		CHECK(sink.writes[fill_end].slba == next);
		next += sink.writes[fill_end].nlb;
		fill_end++;
	}
	const auto fill = coverage(sink.writes, 0, fill_end, kLbas);
	const auto windows_end = static_cast<uint64_t>(kLbas * 0.89);
	const auto tail_end = next;
	CHECK(tail_end >= static_cast<uint64_t>(kLbas * 0.98));
	for (uint64_t l = 0; l < tail_end; l++)
		REQUIRE(fill[l] == 1);
	// After it: writers 1..5 only, inside the windows, never in the tail.
	std::set<uint64_t> writers;
	uint64_t highest = 0;
	for (size_t i = fill_end; i < sink.writes.size(); i++) {
		writers.insert(sink.writes[i].writer);
		highest = std::max(highest, sink.writes[i].slba + sink.writes[i].nlb);
	}
	CHECK(writers == std::set<uint64_t>{1, 2, 3, 4, 5});
	CHECK(highest <= windows_end);
	CHECK(wl.extra()["fill_writer"] == 6);
}

TEST_CASE("slots: windows or a tail that do not fit get one line naming the option")
{
	SlotConfig c = rebuild_config();
	c.static_tail = 0.2;  // 0.89 + 0.2
	auto r = SlotWorkload::validate(c, kCapacity);
	REQUIRE_FALSE(r);
	CHECK(r.error().message().find("--slot-static-tail") != std::string::npos);
	c.static_tail = 0;
	for (auto &w : c.workers)
		w.window = 0.15;  // 9 x 0.15 = 1.35
	r = SlotWorkload::validate(c, kCapacity);
	REQUIRE_FALSE(r);
	const std::string m = r.error().message();
	CHECK(m.find("--slot-windows") != std::string::npos);
	CHECK(m.find("at most 1") != std::string::npos);
	CHECK(m.find('\n') == std::string::npos);
}

TEST_CASE("slots: --slot-writers gives one positive id per worker, or one line naming it")
{
	WorkloadOptions o;
	WorkloadContext ctx;
	ctx.workload = "slots";
	ctx.utilisation = 0.89;
	ctx.capacity_bytes = kCapacity;
	for (const char *bad : {"1,2", "1,1,2,3,3,4,4,4,0", "1,1,2,3,3,4,4,4,x"}) {
		CAPTURE(bad);
		o.slot_writers = bad;
		auto r = make_workload(o, ctx);
		REQUIRE_FALSE(r);
		CHECK(r.error().message().find("--slot-writers") != std::string::npos);
	}
	o.slot_writers = "1,1,2,3,3,4,4,4,5";
	o.slot_fill_writer = true;
	o.slot_static_tail = 0.11;
	CHECK(make_workload(o, ctx));
	o.slot_static_tail = 0.2;
	auto r = make_workload(o, ctx);
	REQUIRE_FALSE(r);
	CHECK(r.error().message().find("--slot-static-tail") != std::string::npos);
}

TEST_CASE("kvbm: one slot file overwritten in place, never trimmed, held back by the filter")
{
	DiskTierConfig c = engine_config(DiskTierConfig::Engine::kvbm);
	DiskTierWorkload wl(c);
	RecordingSink sink;
	REQUIRE(wl.run(sim::Placement::none, kLbas, 4096, sink, nullptr));
	CHECK(sink.deallocs == 0);
	const auto x = wl.extra();
	const uint64_t slot_lbas = x["slot_bytes"].get<uint64_t>() / 4096;
	const uint64_t file_end = x["slots"].get<uint64_t>() * slot_lbas;
	CHECK(file_end <= static_cast<uint64_t>(kLbas * 0.9));
	uint64_t engine_writes = 0;
	for (const auto &w : sink.writes) {
		if (w.writer != 1)
			continue;
		engine_writes++;
		// A whole slot at a slot boundary inside the file: an overwrite in place.
		REQUIRE(w.nlb == slot_lbas);
		REQUIRE(w.slba % slot_lbas == 0);
		REQUIRE(w.slba + w.nlb <= file_end);
	}
	CHECK(engine_writes == x["disk_writes"].get<uint64_t>());
	CHECK(engine_writes > x["slots"].get<uint64_t>());  // slots were reused
	// The filter: blocks seen once stay off the disk; without it, none is held back.
	CHECK(x["filtered"].get<uint64_t>() > 0);
	c.filter = 1;
	DiskTierWorkload open(c);
	RecordingSink sink1;
	REQUIRE(open.run(sim::Placement::none, kLbas, 4096, sink1, nullptr));
	CHECK(open.extra()["filtered"] == 0);
}

TEST_CASE("kvbm: with the filter a block reaches the disk only on its second offer")
{
	// No decay within the run: every block written to disk was offered (missed in host
	// memory) at least twice, so disk writes + filtered offers <= offers, and each block's
	// first offer is filtered: filtered >= distinct blocks written.
	DiskTierConfig c = engine_config(DiskTierConfig::Engine::kvbm);
	c.decay = 1e9;
	DiskTierWorkload wl(c);
	RecordingSink sink;
	REQUIRE(wl.run(sim::Placement::none, kLbas, 4096, sink, nullptr));
	const auto x = wl.extra();
	const uint64_t offers = x["accesses"].get<uint64_t>() - x["host_hits"].get<uint64_t>() -
				x["disk_hits"].get<uint64_t>();
	CHECK(x["disk_writes"].get<uint64_t>() + x["filtered"].get<uint64_t>() == offers);
	CHECK(x["filtered"].get<uint64_t>() > 0);
	CHECK(x["filtered"].get<uint64_t>() >= x["distinct_written"].get<uint64_t>());
}

TEST_CASE("trtllm: each rank overwrites its own slot file in step with the others")
{
	DiskTierConfig c = engine_config(DiskTierConfig::Engine::trtllm);
	c.ranks = 4;
	DiskTierWorkload wl(c);
	RecordingSink sink;
	REQUIRE(wl.run(sim::Placement::writer, kLbas, 4096, sink, nullptr));
	CHECK(sink.deallocs == 0);
	const auto x = wl.extra();
	const uint64_t slot_lbas = x["slot_bytes"].get<uint64_t>() / 4096;
	const uint64_t file_lbas = x["slots"].get<uint64_t>() * slot_lbas;
	std::map<uint64_t, std::vector<uint64_t>> offsets;  // rank writer -> slot offsets
	for (const auto &w : sink.writes) {
		if (w.writer == 5)
			continue;  // the fill
		REQUIRE(w.writer >= 1);
		REQUIRE(w.writer <= 4);
		const uint64_t start = (w.writer - 1) * file_lbas;
		REQUIRE(w.slba >= start);
		REQUIRE(w.slba + w.nlb <= start + file_lbas);
		REQUIRE(w.nlb == slot_lbas);
		offsets[w.writer].push_back(w.slba - start);
	}
	REQUIRE(offsets.size() == 4);
	for (uint64_t r = 2; r <= 4; r++)
		CHECK(offsets[r] == offsets[1]);
	CHECK(offsets[1].size() > x["slots"].get<uint64_t>());
}

TEST_CASE("kvbm / trtllm: sizes that cannot work get one line naming the option")
{
	DiskTierConfig c = engine_config(DiskTierConfig::Engine::kvbm);
	c.keys = 1.05;  // fits in host memory and disk: the disk never turns over
	auto r = DiskTierWorkload::validate(c, kCapacity);
	REQUIRE_FALSE(r);
	CHECK(r.error().message().find("--engine-keys") != std::string::npos);
	c = engine_config(DiskTierConfig::Engine::trtllm);
	c.block_bytes = 1ull << 30;  // 4 MiB slots after the scale: a handful in 64 MiB
	c.ranks = 2;
	r = DiskTierWorkload::validate(c, kCapacity);
	REQUIRE_FALSE(r);
	CHECK(r.error().message().find("--util") != std::string::npos);
	CHECK(r.error().message().find('\n') == std::string::npos);
}
