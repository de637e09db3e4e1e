// The twin's recent window (model/twin/window.*): a bounded ring that wraps, the model
// pieces it is fed (adjacent ones as one record, in the sampled model's LBAs), its share of
// the memory bound, and Twin::window's reply with the rate and the sampled model's shape.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "model/twin/models.hpp"
#include "model/twin/twin.hpp"
#include "model/twin/window.hpp"

using namespace kvfdp;

namespace {

twin::Record write_of(uint64_t slba, uint32_t nlb, uint16_t h)
{
	return twin::Record{slba, nlb, h, twin::Op::write, 0};
}

}  // namespace

TEST_CASE("twin window: keeps the last `capacity` records oldest first, wraps, and times its span")
{
	twin::Window w(4);
	CHECK(w.memory_bytes() == 4 * 20);
	proto::TwinWindow empty;
	w.fill(empty, 7);
	CHECK(empty.records.empty());
	CHECK(empty.span_ms == 0);
	for (uint32_t i = 0; i < 6; i++)
		w.push(write_of(i * 8, 8, static_cast<uint16_t>(i % 3)), 100 + 10 * i);
	CHECK(w.total() == 6);
	CHECK(w.size() == 4);
	proto::TwinWindow r;
	w.fill(r, 200);
	REQUIRE(r.records.size() == 4);
	for (uint32_t i = 0; i < 4; i++) {  // records 2..5
		CHECK(r.records[i].lba == (i + 2) * 8);
		CHECK(r.records[i].handle == (i + 2) % 3);
		CHECK(r.records[i].op == proto::TwinWindowOp::write);
	}
	CHECK(r.capacity == 4);
	CHECK(r.total == 6);
	CHECK(r.span_ms == 30);  // 120 .. 150
	CHECK(r.age_ms == 50);   // 150 .. 200
	// The times wrap at 2^32 ms; the span is still the difference.
	twin::Window wrap(2);
	wrap.push(write_of(0, 1, 0), 0xFFFFFFF0u);
	wrap.push(write_of(1, 1, 0), 0x10u);
	proto::TwinWindow ww;
	wrap.fill(ww, 0x20u);
	CHECK(ww.span_ms == 0x20);
	CHECK(ww.age_ms == 0x10);
	twin::Window none(0);
	none.push(write_of(0, 1, 0), 1);
	CHECK(none.size() == 0);
	CHECK(none.memory_bytes() == 0);
}

TEST_CASE(
	"twin window: the models put each record's pieces in the window, adjacent ones as one record")
{
	const twin::TwinGeometry g{(64ull << 20) / 4096, 4096, 1 << 20, 4, 0.28};
	auto plan = twin::plan_twin_at(g, 256);  // rate 1: slots are the device's regions
	REQUIRE(plan);
	auto m = twin::TwinModels::create(*plan);
	REQUIRE(m);
	twin::Window w(16);
	(*m)->set_window(&w);
	(*m)->set_now_ms(5);
	(*m)->apply(write_of(64, 32, 2));
	(*m)->apply(twin::Record{0, static_cast<uint32_t>(g.nlb), 0, twin::Op::discard,
				 0});  // the whole device
	proto::TwinWindow r;
	w.fill(r, 5);
	REQUIRE(r.records.size() == 2);
	CHECK(r.records[0].lba == 64);
	CHECK(r.records[0].nlb == 32);
	CHECK(r.records[0].handle == 2);
	CHECK(r.records[1].op == proto::TwinWindowOp::discard);
	CHECK(r.records[1].nlb == g.nlb);

	// At rate 1/2 the pieces are the kept regions' slots: inside the sampled model, and
	// together what the model was written.
	auto half = twin::plan_twin_at(g, 128);
	REQUIRE(half);
	auto hm = twin::TwinModels::create(*half);
	REQUIRE(hm);
	twin::Window hw(4096);
	(*hm)->set_window(&hw);
	for (uint64_t i = 0; i < 64; i++)
		(*hm)->apply(write_of(i * 32, 32, 1));
	proto::TwinWindow h;
	hw.fill(h, 0);
	uint64_t lbas = 0;
	for (const proto::TwinWindowRecord &rec : h.records) {
		CHECK(rec.lba + rec.nlb <= half->model.logical_bytes / 4096);
		lbas += rec.nlb;
	}
	CHECK(lbas * 4096 == (*hm)->placed().stats().host_bytes);
	CHECK(lbas > 0);
	CHECK(lbas < 64 * 32);
	CHECK(h.records.size() > 1);
}

TEST_CASE("twin window: takes a sixteenth of the memory bound, counted in the twin's memory")
{
	twin::TwinOptions o;  // 960 GiB with 16 GiB RUs at the default bound
	o.geometry.nlb = (960ull << 30) / 4096;
	o.geometry.ru_size = 16ull << 30;
	o.geometry.nruh = 8;
	auto t = twin::Twin::create(o);
	REQUIRE(t);
	const twin::TwinPlan &p = (*t)->plan();
	CHECK(p.window_records == twin::kDefaultMemoryBytes / 16 / twin::kWindowRecordBytes);
	CHECK(p.memory_bytes + p.window_records * twin::kWindowRecordBytes <=
	      twin::kDefaultMemoryBytes);
	const twin::TwinReport rep = (*t)->report();  // no rings yet
	CHECK(rep.memory_bytes == p.memory_bytes + p.window_records * twin::kWindowRecordBytes);
	MESSAGE("960 GiB / 16 GiB RUs at 64 MiB: rate ", p.rate, ", models ", p.memory_bytes,
		" bytes, window ", p.window_records, " records, twin ", rep.memory_bytes, " bytes");
	const proto::TwinWindow w = (*t)->window();
	CHECK(w.capacity == p.window_records);
	CHECK(w.rate == p.rate);
	CHECK(w.model.logical_bytes == p.model.logical_bytes);
	CHECK(w.model.ru_size == p.model.ru_size);
	CHECK(w.model.handles == 8);
	CHECK(w.model.op == doctest::Approx(0.07));
	CHECK(w.model.gc == "greedy");
	CHECK(w.records.empty());
}

TEST_CASE("twin window: window() drains the rings first, and the window's reply survives JSON")
{
	twin::TwinOptions o;
	o.geometry = twin::TwinGeometry{(64ull << 20) / 4096, 4096, 1 << 20, 4, 0.28};
	auto t = twin::Twin::create(o);
	REQUIRE(t);
	(*t)->add_rings(1);
	for (uint64_t i = 0; i < 100; i++)
		REQUIRE((*t)->ring(0).push(write_of(i * 64, 16, static_cast<uint16_t>(i % 4))));
	REQUIRE((*t)->ring(0).push(twin::Record{0, 64, 0, twin::Op::write_zeroes, 0}));
	const proto::TwinWindow w = (*t)->window();  // no thread, no drain() before it
	REQUIRE(w.records.size() == 101);
	CHECK((*t)->drain() == 0);
	CHECK(w.records[99].lba == 99 * 64);
	CHECK(w.records[99].handle == 3);
	CHECK(w.records[100].op == proto::TwinWindowOp::write_zeroes);
	CHECK(w.records[100].handle == 0);
	const proto::TwinWindow back = nlohmann::json(w).get<proto::TwinWindow>();
	REQUIRE(back.records.size() == w.records.size());
	CHECK(back.records[42].lba == w.records[42].lba);
	CHECK(back.records[100].op == proto::TwinWindowOp::write_zeroes);
	CHECK(back.model.logical_bytes == w.model.logical_bytes);
	CHECK(back.total == 101);
}

TEST_CASE(
	"twin window: a page holds at most max records from a record number on, and says where the next starts")
{
	twin::Window w(10);
	for (uint32_t i = 0; i < 25; i++)  // records 15..24 are held
		w.push(write_of(i, 1, 0), i);
	proto::TwinWindow p;
	w.fill(p, 30, 0, 4);  // from an overwritten record: from the oldest held
	CHECK(p.first == 15);
	CHECK(p.next == 19);
	REQUIRE(p.records.size() == 4);
	CHECK(p.records[0].lba == 15);
	CHECK(p.records[3].lba == 18);
	CHECK(p.total == 25);
	CHECK(p.span_ms == 9);  // the whole window's, not the page's
	w.fill(p, 30, p.next, 4);
	CHECK(p.first == 19);
	CHECK(p.records.front().lba == 19);
	w.fill(p, 30, 23, 4);  // the last page is short and ends at total
	CHECK(p.first == 23);
	CHECK(p.next == 25);
	CHECK(p.records.size() == 2);
	w.fill(p, 30, 99, 4);  // past the newest: nothing, next == total
	CHECK(p.records.empty());
	CHECK(p.first == 25);
	CHECK(p.next == 25);
	w.fill(p, 30);  // no page asked: every record held
	CHECK(p.records.size() == 10);
	CHECK(p.next == 25);
}
