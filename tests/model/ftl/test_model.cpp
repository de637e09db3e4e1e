// Unit tests of the FDP SSD model: invariants, a differential test against a simple
// reference FTL, the analytic WAF, hot/cold separation, RUAMW, trim and isolation.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <set>

#include "model/ftl/ftl.hpp"
#include "model/ftl/theory.hpp"
#include "tests/model/ftl/reference_ftl.hpp"
#include "model/sim/simulate.hpp"
#include "model/sim/synthetic.hpp"

using namespace kvfdp;
using model::Ftl;
using model::ModelConfig;

namespace {

std::unique_ptr<Ftl> make(const ModelConfig &c)
{
	auto f = Ftl::create(c);
	REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message()));
	return std::move(*f);
}

void require_invariants(const Ftl &f)
{
	auto r = f.check_invariants();
	REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
}

ModelConfig small_config()
{
	ModelConfig c;
	c.logical_bytes = 8u << 20;  // 2048 units of 4 KiB
	c.ru_size = 64u << 10;       // 16 units per RU
	c.nruh = 4;
	c.op = 0.25;
	return c;
}

}  // namespace

TEST_CASE("model: lambert W0 solves w e^w = x and gives the published WAFs")
{
	CHECK(model::lambert_w0(0) == 0);
	CHECK(model::lambert_w0(-std::exp(-1.0)) == doctest::Approx(-1.0));
	CHECK(model::lambert_w0(std::exp(1.0)) == doctest::Approx(1.0).epsilon(1e-12));
	for (double x : {-0.367, -0.3, -0.1, 0.5, 3.0, 100.0, 1e6}) {
		const double w = model::lambert_w0(x);
		CHECK(w > -1.0);
		CHECK(w * std::exp(w) == doctest::Approx(x).epsilon(1e-10));
	}
	CHECK(std::isnan(model::lambert_w0(-0.5)));
	CHECK(model::greedy_uniform_waf(0.28) == doctest::Approx(2.48).epsilon(0.003));
	CHECK(model::greedy_uniform_waf(0.07) == doctest::Approx(7.82).epsilon(0.003));
}

TEST_CASE("model: config validation names what is wrong")
{
	ModelConfig c = small_config();
	CHECK(model::validate(c).ok());
	ModelConfig b = c;
	b.lba_size = 1000;
	CHECK_FALSE(model::validate(b).ok());
	b = c;
	b.mapping_unit = 6144;
	CHECK_FALSE(model::validate(b).ok());
	b = c;
	b.op = 0;
	CHECK_FALSE(model::validate(b).ok());
	b = c;
	b.op = 0.001;  // no room for open RUs and the GC reserve
	auto r = model::validate(b);
	REQUIRE_FALSE(r.ok());
	CHECK(r.error().context.find("over-provisioning") != std::string::npos);
	b = c;
	b.ruh_types = {model::HandleType::persistently_isolated};
	CHECK_FALSE(model::validate(b).ok());
	b = c;
	b.gc_low = 3;
	b.gc_high = 3;
	CHECK_FALSE(model::validate(b).ok());
	CHECK_FALSE(Ftl::create(b).ok());
}

TEST_CASE("model: host writes, overwrites and trims keep every invariant")
{
	ModelConfig c = small_config();
	c.lba_size = 512;  // 8 LBAs per unit: partial-unit writes and trims
	auto f = make(c);
	sim::Rng rng(7);
	const uint64_t lbas = f->logical_lbas();
	for (int i = 0; i < 200000; i++) {
		const uint64_t slba = rng.below(lbas);
		const uint64_t nlb = 1 + rng.below(std::min<uint64_t>(40, lbas - slba));
		if (rng.below(10) == 0)
			REQUIRE(f->deallocate(slba, nlb) == 0);
		else
			REQUIRE(f->write(static_cast<uint32_t>(rng.below(4)), slba, nlb) == 0);
		if (i % 20000 == 0)
			require_invariants(*f);
	}
	require_invariants(*f);
	const auto rc = f->ru_counts(0);
	CHECK(rc.free + rc.open + rc.full == f->rus_per_rg());
	CHECK(f->stats().gc_runs > 0);
	CHECK(f->stats().media_bytes ==
	      f->stats().relocated_bytes + (f->stats().media_bytes - f->stats().relocated_bytes));
	CHECK(f->stats().erased_bytes == f->stats().gc_runs * c.ru_size);
	CHECK(f->write(0, lbas, 1) == -EINVAL);
	CHECK(f->write(0, lbas - 1, 2) == -EINVAL);
	CHECK(f->write(16, 0, 1) == -EINVAL);
	CHECK(f->deallocate(0, 0) == -EINVAL);
}

TEST_CASE("model: matches the reference FTL exactly on random small configs")
{
	sim::Rng rng(2024);
	for (int round = 0; round < 60; round++) {
		ModelConfig c;
		c.lba_size = rng.below(2) ? 512 : 4096;
		c.mapping_unit = 4096;
		const uint32_t upr = 2 + static_cast<uint32_t>(rng.below(15));
		c.ru_size = uint64_t{upr} * c.mapping_unit;
		c.nrg = static_cast<uint16_t>(1 + rng.below(2));
		c.nruh = static_cast<uint16_t>(1 + rng.below(4));
		const uint64_t logical_rus = 8 + rng.below(40);
		c.logical_bytes = logical_rus * c.ru_size;
		c.op = 0.15 + 0.5 * rng.unit();
		c.gc = rng.below(2) ? model::GcPolicy::greedy : model::GcPolicy::cost_benefit;
		if (rng.below(2)) {
			for (uint32_t h = 0; h < c.nruh; h++)
				c.ruh_types.push_back(
					rng.below(2) ? model::HandleType::persistently_isolated
						     : model::HandleType::initially_isolated);
		}
		if (rng.below(3) == 0) {
			c.gc_low = 3;
			c.gc_high = 5;
		}
		// Raise OP until the geometry is valid.
		while (!model::validate(c).ok())
			c.op += 0.25;
		CAPTURE(round);
		CAPTURE(upr);
		CAPTURE(c.nrg);
		CAPTURE(c.nruh);
		CAPTURE(c.op);
		auto f = make(c);
		model::test::ReferenceFtl ref(c);
		const uint64_t lbas = f->logical_lbas();
		const uint32_t nh = f->handles();
		// Hot spots make greedy choices differ from random ones.
		const uint64_t hot = std::max<uint64_t>(1, lbas / 8);
		for (int i = 0; i < 6000; i++) {
			const uint64_t slba = rng.below(3) ? rng.below(hot) : rng.below(lbas);
			const uint64_t nlb = 1 + rng.below(std::min<uint64_t>(24, lbas - slba));
			int a, b;
			if (rng.below(12) == 0) {
				a = f->deallocate(slba, nlb);
				b = ref.deallocate(slba, nlb);
			} else {
				// With two groups, keep most data in group 0 so group 1 rarely fills.
				const uint32_t h = static_cast<uint32_t>(rng.below(nh));
				a = f->write(h, slba, nlb);
				b = ref.write(h, slba, nlb);
			}
			REQUIRE(a == b);
			if (a == -ENOSPC)
				break;
			const model::Stats &x = f->stats(), &y = ref.stats;
			REQUIRE(x.host_bytes == y.host_bytes);
			REQUIRE(x.media_bytes == y.media_bytes);
			REQUIRE(x.erased_bytes == y.erased_bytes);
			REQUIRE(x.gc_runs == y.gc_runs);
			REQUIRE(x.relocated_bytes == y.relocated_bytes);
			REQUIRE(x.deallocated_bytes == y.deallocated_bytes);
			REQUIRE(f->live_units() == ref.live_units());
			for (uint32_t h = 0; h < nh; h++)
				REQUIRE(f->ruamw(h) == ref.ruamw(h));
		}
		require_invariants(*f);
	}
}

TEST_CASE("model: greedy GC under uniform random writes is within 10% of Xiang-Kurkoski")
{
	for (double op : {0.28, 0.07}) {
		ModelConfig c;
		c.logical_bytes = 1u << 30;
		c.ru_size = 1u << 20;
		c.op = op;
		sim::UniformWorkload w(sim::UniformOptions{});
		auto r = sim::run_one(c, w, sim::Placement::none, nullptr);
		REQUIRE(r.ok());
		const double theory = model::greedy_uniform_waf(op);
		std::printf("model: uniform greedy OP %.2f: WAF %.3f, analytic %.3f (%+.1f%%)\n",
			    op, r->waf, theory, (r->waf / theory - 1) * 100);
		CHECK(r->waf == doctest::Approx(theory).epsilon(0.10));
		CHECK(r->media_bytes == r->host_bytes + r->relocated_bytes);
	}
}

TEST_CASE("model: cost-benefit GC runs the same workload with a WAF of the same order")
{
	ModelConfig c;
	c.logical_bytes = 256u << 20;
	c.ru_size = 256u << 10;
	c.op = 0.28;
	c.gc = model::GcPolicy::cost_benefit;
	sim::UniformOptions o;
	o.warmup_writes = 1;
	o.measure_writes = 1;
	sim::UniformWorkload w(o);
	auto r = sim::run_one(c, w, sim::Placement::none, nullptr);
	REQUIRE(r.ok());
	// Under uniform writes age carries no information: cost-benefit cannot beat greedy
	// by much, and must stay far below a pathological policy.
	CHECK(r->waf > 2.0);
	CHECK(r->waf < 3.5);
}

TEST_CASE("model: hot/cold separation: placement brings WAF near 1, none stays above")
{
	ModelConfig c;
	c.logical_bytes = 512u << 20;
	c.ru_size = 512u << 10;
	c.op = 0.28;
	sim::HotColdWorkload w(sim::HotColdOptions{});
	auto none = sim::run_one(c, w, sim::Placement::none, nullptr);
	auto hint = sim::run_one(c, w, sim::Placement::hint, nullptr);
	REQUIRE(none.ok());
	REQUIRE(hint.ok());
	std::printf("model: hotcold OP 0.28: WAF none %.3f, hint %.3f\n", none->waf, hint->waf);
	CHECK(hint->waf < none->waf);
	CHECK(hint->waf < 1.05);
	CHECK(none->waf > 1.3);
}

TEST_CASE("model: RUAMW counts down on the handle written and no other")
{
	ModelConfig c = small_config();
	auto f = make(c);
	const uint64_t ru_lbas = c.ru_size / c.lba_size;
	for (uint32_t h = 0; h < f->handles(); h++)
		CHECK(f->ruamw(h) == ru_lbas);
	REQUIRE(f->write(2, 0, 5) == 0);
	CHECK(f->ruamw(2) == ru_lbas - 5);
	CHECK(f->ruamw(0) == ru_lbas);
	CHECK(f->handle_used(2));
	CHECK_FALSE(f->handle_used(1));
	// Filling the RU moves the handle to a fresh one.
	REQUIRE(f->write(2, 5, ru_lbas - 5) == 0);
	CHECK(f->ruamw(2) == ru_lbas);
	REQUIRE(f->write(2, 100, 1) == 0);
	CHECK(f->ruamw(2) == ru_lbas - 1);
	CHECK(f->stats().host_bytes == (ru_lbas + 1) * c.lba_size);
}

TEST_CASE("model: deallocated data is not relocated; trimmed RUs are erased for free")
{
	ModelConfig c = small_config();
	auto f = make(c);
	const uint64_t lbas = f->logical_lbas();
	for (int pass = 0; pass < 6; pass++) {
		for (uint64_t l = 0; l < lbas; l++)
			REQUIRE(f->write(0, l, 1) == 0);
		REQUIRE(f->deallocate(0, lbas) == 0);
		CHECK(f->live_units() == 0);
	}
	require_invariants(*f);
	CHECK(f->stats().gc_runs > 0);
	CHECK(f->stats().relocated_bytes == 0);
	CHECK(f->stats().waf() == doctest::Approx(1.0));
	// A trim that covers part of a unit leaves it mapped.
	c.lba_size = 512;
	auto g = make(c);
	REQUIRE(g->write(0, 0, 8) == 0);
	REQUIRE(g->deallocate(1, 7) == 0);
	CHECK(g->live_units() == 1);
	REQUIRE(g->deallocate(0, 8) == 0);
	CHECK(g->live_units() == 0);
}

TEST_CASE("model: a persistently isolated handle's data never shares an RU with others")
{
	ModelConfig c = small_config();
	c.ruh_types = {
		model::HandleType::initially_isolated, model::HandleType::persistently_isolated,
		model::HandleType::initially_isolated, model::HandleType::initially_isolated};
	auto f = make(c);
	const uint64_t lbas = f->logical_lbas();
	// Handle h owns LBAs with (lba / 8) % 3 == h; random overwrites force GC.
	auto owner_of = [](uint64_t lba) { return static_cast<uint32_t>((lba / 8) % 3); };
	sim::Rng rng(3);
	for (int i = 0; i < 100000; i++) {
		const uint64_t l = rng.below(lbas);
		REQUIRE(f->write(owner_of(l), l, 1) == 0);
	}
	require_invariants(*f);
	REQUIRE(f->stats().relocated_bytes > 0);
	std::set<uint32_t> rus_of_1, rus_of_others;
	for (uint64_t l = 0; l < lbas; l++) {
		const uint32_t ru = f->ru_of_lba(l);
		if (ru == Ftl::kNoRu)
			continue;
		(owner_of(l) == 1 ? rus_of_1 : rus_of_others).insert(ru);
		if (owner_of(l) == 1)
			CHECK(f->ru_owner(ru) == 1);
	}
	for (uint32_t ru : rus_of_1)
		CHECK(rus_of_others.count(ru) == 0);
	// The initially isolated handles' relocated data shares the GC stream's RUs.
	bool shared_seen = false;
	for (uint32_t ru : rus_of_others)
		shared_seen = shared_seen || f->ru_owner(ru) == -1;
	CHECK(shared_seen);
}

TEST_CASE("model: GC's relocations are counted by the handle whose RU they leave: the churned one")
{
	ModelConfig c = small_config();
	auto f = make(c);
	const uint64_t half = f->logical_lbas() / 2;
	// Handle 1 writes [0, half) once, in order; handle 0 overwrites [half, 2 half) at random,
	// 16 of its writes to each of handle 1's.
	sim::Rng rng(7);
	uint64_t next_seq = 0;
	for (int i = 0; i < 120000; i++) {
		if (i % 16 == 0 && next_seq < half)
			REQUIRE(f->write(1, next_seq++, 1) == 0);
		REQUIRE(f->write(0, half + rng.below(half), 1) == 0);
	}
	REQUIRE(next_seq == half);
	require_invariants(*f);
	const model::HandleStats &churned = f->handle_stats(0), &sequential = f->handle_stats(1);
	CHECK(churned.host_bytes == 120000ull * c.lba_size);
	CHECK(sequential.host_bytes == half * c.lba_size);
	CHECK(f->handle_stats(2).host_bytes == 0);
	REQUIRE(f->stats().relocated_bytes > 0);
	// Handle 1's RUs stay whole, so greedy GC never picks them.
	CHECK(churned.relocated_bytes > 0);
	CHECK(sequential.relocated_bytes == 0);
	CHECK(churned.relocated_bytes <= f->stats().relocated_bytes);
	MESSAGE("relocated: handle 0 ", churned.relocated_bytes, ", handle 1 ",
		sequential.relocated_bytes, ", all ", f->stats().relocated_bytes);
}
