// Bench (reported, never asserted on speed): mapping-unit writes per CPU second of the
// model, single-threaded, for uniform random and sequential 4 KiB writes at several capacities;
// and 4 KiB writes per second through the model device's IoQueue (data file in /dev/shm).
#include <doctest/doctest.h>

#include <liburing.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "model/ftl/ftl.hpp"
#include "model/ftl/model_device.hpp"
#include "tests/support/temp_files.hpp"
#include "model/sim/synthetic.hpp"

using namespace kvfdp;

namespace {

// CPU time of this thread: the machine may be shared, and the figure is the model's cost.
double cpu_seconds()
{
	timespec ts{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Figure {
	double host_per_s;     // host mapping-unit writes per second
	double program_per_s;  // units programmed per second (host + GC relocation)
	double waf;
};

// Fills the device, then writes `passes` device writes of random (or sequential) units.
Figure run(uint64_t capacity, double op, bool random, double passes)
{
	model::ModelConfig c;
	c.logical_bytes = capacity;
	c.ru_size = 1u << 20;
	c.op = op;
	auto f = model::Ftl::create(c);
	REQUIRE(f.ok());
	model::Ftl &ftl = **f;
	const uint64_t units = ftl.logical_lbas();  // 4 KiB LBAs = mapping units
	for (uint64_t u = 0; u < units; u++)
		REQUIRE(ftl.write(0, u, 1) == 0);
	const model::Stats before = ftl.stats();
	const auto n = static_cast<uint64_t>(passes * static_cast<double>(units));
	sim::Rng rng(42);
	const double t0 = cpu_seconds();
	int err = 0;
	for (uint64_t i = 0; i < n; i++)
		err |= ftl.write(0, random ? rng.below(units) : i % units, 1);
	const double s = cpu_seconds() - t0;
	REQUIRE(err == 0);
	const model::Stats d = ftl.stats().since(before);
	return {static_cast<double>(n) / s, static_cast<double>(d.media_bytes / c.mapping_unit) / s,
		d.waf()};
}

}  // namespace

TEST_CASE("model bench: mapping-unit writes per second, single-threaded")
{
	std::printf("%-10s %-10s %5s %7s %16s %20s\n", "capacity", "pattern", "op", "WAF",
		    "host units/s", "programmed units/s");
	struct Case {
		uint64_t cap;
		double op;
		bool random;
	};
	const Case cases[] = {
		{uint64_t{1} << 30, 0.28, true},  {uint64_t{4} << 30, 0.28, true},
		{uint64_t{16} << 30, 0.28, true}, {uint64_t{4} << 30, 0.07, true},
		{uint64_t{4} << 30, 0.28, false}, {uint64_t{16} << 30, 0.28, false},
	};
	for (const Case &k : cases) {
		const Figure fig = run(k.cap, k.op, k.random, 2.0);
		std::printf("%-10s %-10s %5.2f %7.3f %14.1f M %18.1f M\n",
			    (std::to_string(k.cap >> 30) + " GiB").c_str(),
			    k.random ? "random" : "sequential", k.op, fig.waf, fig.host_per_s / 1e6,
			    fig.program_per_s / 1e6);
		CHECK(fig.waf >= 1.0);
	}
}

TEST_CASE("model bench: 4 KiB writes per second through the model device's IoQueue")
{
	const kvfdp::test::TempFile data({}, "/dev/shm");
	model::ModelDeviceOptions o;
	o.config.logical_bytes = uint64_t{256} << 20;
	o.data_path = data.path;
	auto dev = model::open_model_device(o);
	REQUIRE(dev.ok());
	io_uring ring{};
	auto q = (*dev)->open_queue(ring);
	REQUIRE(q.ok());
	const uint64_t nlb = (*dev)->info().nlb;
	std::vector<uint8_t> buf(4096, 0x5A);
	nvme::IoRequest r;
	r.op = nvme::IoOp::write;
	r.nlb = 1;
	r.buf = buf.data();
	sim::Rng rng(7);
	const uint64_t n = 4 * nlb;  // a fill's worth of warm-up is included: WAF > 1 by the end
	int err = 0;
	const double t0 = cpu_seconds();
	for (uint64_t i = 0; i < n; i++) {
		r.slba = i < nlb ? i : rng.below(nlb);
		r.handle = static_cast<uint16_t>(i & 3);
		err |= (*q)->prep(ring, r).result;
	}
	const double s = cpu_seconds() - t0;
	q->reset();
	dev->reset();
	REQUIRE(err == 0);
	std::printf("model device: %.0f 4 KiB writes per CPU second (pwrite to /dev/shm + FTL), "
		    "%.2f us each\n",
		    static_cast<double>(n) / s, s * 1e6 / static_cast<double>(n));
	CHECK(s > 0);
}
