// Striping (nvme/stripe.hpp, docs/nvme.md "Striping"): the layout arithmetic against a walk of
// every LBA; kvfdpd's split loop (io_engine.cpp) on a striped device: pieces at unit ends and
// the transfer limit, flush/discard/write-zeroes fan-out, one error failing the request; a
// stripe of FDP SSD models (each member its own model and data file): capacity, data where
// the layout says, bytes per handle per member equal to what each class wrote there; the
// refusals.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "nvme/backends.hpp"
#include "nvme/logs.hpp"
#include "model/ftl/model_device.hpp"
#include "nvme/spec.hpp"
#include "nvme/stripe.hpp"
#include "tests/kvfdpd/fake_device.hpp"
#include "tests/support/engine_rig.hpp"
#include "tests/support/temp_files.hpp"
#include "kvfdpd/daemon/io/io_engine.hpp"
#include "kvfdpd/daemon/io/user_data.hpp"
#include "kvfdpd/ublk/ctrl.hpp"

using namespace kvfdp;
using namespace kvfdp::daemon;
using nvme::StripeLayout;

namespace {

// A deterministic sequence for ranges (no timing, no global random state).
struct Lcg {
	uint64_t s;
	uint64_t next(uint64_t bound)
	{
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		return (s >> 33) % bound;
	}
};

// Every LBA of [lba, lba + nlb) through map(), grouped by member: the member LBAs in order.
std::vector<std::vector<uint64_t>> walk(const StripeLayout &l, uint64_t lba, uint64_t nlb)
{
	std::vector<std::vector<uint64_t>> per(l.members);
	for (uint64_t x = lba; x < lba + nlb; x++) {
		const auto p = l.map(x);
		per[p.member].push_back(p.mlba);
	}
	return per;
}

}  // namespace

TEST_CASE("stripe layout: map places units round-robin, member_range is the walk of every LBA")
{
	const StripeLayout l{3, 8};
	auto p = l.map(0);
	CHECK(std::tie(p.member, p.mlba, p.nlb) ==
	      std::tuple<uint32_t, uint64_t, uint64_t>{0, 0, 8});
	p = l.map(8);
	CHECK(std::tie(p.member, p.mlba, p.nlb) ==
	      std::tuple<uint32_t, uint64_t, uint64_t>{1, 0, 8});
	p = l.map(23);
	CHECK(std::tie(p.member, p.mlba, p.nlb) ==
	      std::tuple<uint32_t, uint64_t, uint64_t>{2, 7, 1});
	p = l.map(24);  // the second row
	CHECK(std::tie(p.member, p.mlba, p.nlb) ==
	      std::tuple<uint32_t, uint64_t, uint64_t>{0, 8, 8});
	// [5, 30): member 0 has 5..7 and 24..29 (member LBAs 5..13), 1 and 2 one whole unit each.
	CHECK(l.member_range(0, 5, 25).mlba == 5);
	CHECK(l.member_range(0, 5, 25).nlb == 9);
	CHECK(l.member_range(1, 5, 25).nlb == 8);
	CHECK(l.member_range(2, 5, 25).nlb == 8);
	CHECK(l.member_range(2, 0, 8).nlb == 0);  // inside member 0's first unit
	// One member: the identity.
	const StripeLayout one;
	CHECK(one.map(12345).mlba == 12345);
	CHECK(one.map(12345).member == 0);
	CHECK(one.member_range(0, 7, 9).mlba == 7);
	CHECK(one.member_range(0, 7, 9).nlb == 9);

	// Against the walk, for member counts, unit sizes (odd ones too) and ranges that stay in
	// a unit, cross one, two or many unit ends, start and end mid-unit.
	Lcg rng{42};
	for (uint32_t n : {2u, 3u, 4u, 7u})
		for (uint64_t unit : {1ull, 3ull, 8ull, 12ull, 128ull}) {
			const StripeLayout sl{n, unit};
			for (int i = 0; i < 60; i++) {
				const uint64_t lba = rng.next(unit * n * 6);
				const uint64_t nlb = 1 + rng.next(i % 3 == 0 ? unit : unit * n * 4);
				const auto per = walk(sl, lba, nlb);
				for (uint32_t m = 0; m < n; m++) {
					const auto r = sl.member_range(m, lba, nlb);
					CAPTURE(n);
					CAPTURE(unit);
					CAPTURE(lba);
					CAPTURE(nlb);
					CAPTURE(m);
					REQUIRE(r.nlb == per[m].size());
					for (size_t k = 0; k < per[m].size(); k++)
						REQUIRE(per[m][k] ==
							r.mlba + k);  // consecutive on the member
				}
			}
			// A bijection: the first rows fill every member's first LBAs exactly once.
			std::set<std::pair<uint32_t, uint64_t>> seen;
			for (uint64_t x = 0; x < unit * n * 5; x++) {
				const auto q = sl.map(x);
				CHECK(q.mlba < unit * 5);
				seen.insert({q.member, q.mlba});
			}
			CHECK(seen.size() == unit * n * 5);
		}
}

TEST_CASE("stripe size default: the largest member's transfer limit rounded up to a power of two")
{
	const uint32_t qemu61[] = {508u << 10, 512u << 10};
	CHECK(nvme::default_stripe_bytes(qemu61) == 512u << 10);
	const uint32_t small[] = {128u << 10, 64u << 10};
	CHECK(nvme::default_stripe_bytes(small) == 128u << 10);
	const uint32_t odd[] = {600u << 10};
	CHECK(nvme::default_stripe_bytes(odd) == 1u << 20);
	const uint32_t none[] = {0u};
	CHECK(nvme::default_stripe_bytes(none) == 4096);
}

namespace {

// The engine of one queue over ioq, with 4 tags of 1 MiB buffers, on a stripe.
struct Rig : test::EngineRig {
	Rig(nvme::IoQueue &ioq, const StripeLayout &layout, uint32_t max_transfer, uint64_t nlb,
	    uint16_t nruh = 8)
	    : test::EngineRig(ioq, config(layout, max_transfer, nlb, nruh),
			      IORING_SETUP_SQE128 | IORING_SETUP_CQE32)
	{
	}
	static EngineConfig config(const StripeLayout &layout, uint32_t max_transfer, uint64_t nlb,
				   uint16_t nruh)
	{
		EngineConfig ec;
		ec.max_transfer = max_transfer;
		ec.nlb = nlb;
		ec.nruh = nruh;
		ec.fixed_buffers = false;
		ec.stripe = layout;
		return ec;
	}
};

struct Cmd {
	uint32_t member;
	uint64_t slba;
	uint32_t nlb;
	size_t buf_off;
};

std::vector<Cmd> cmds_of(const test::NullQueue &q, const Rig &rig, uint16_t tag)
{
	std::vector<Cmd> out;
	for (const auto &r : q.reqs)
		out.push_back(Cmd{
			r.member, r.slba, r.nlb,
			r.buf ? static_cast<size_t>(static_cast<uint8_t *>(r.buf) - rig.bufs[tag])
			      : 0});
	return out;
}

}  // namespace

TEST_CASE(
	"engine on a stripe: a request splits at unit ends and the transfer limit, each piece on its member")
{
	test::NullQueue q(true);
	const StripeLayout l{4, 16};  // 64 KiB units, 32 KiB commands
	Rig rig(q, l, 32 * 1024, 4 * 16 * 100);

	SUBCASE("inside one unit: one command")
	{
		rig.write(0, 16 * 5 + 2, 8, KVFDP_CLASS_LONG);  // unit 5: member 1, row 1
		const auto c = cmds_of(q, rig, 0);
		REQUIRE(c.size() == 1);
		CHECK(c[0].member == 1);
		CHECK(c[0].slba == 16 + 2);
		CHECK(c[0].nlb == 8);
		CHECK(q.reqs[0].handle == 3);
	}
	SUBCASE("crossing one unit end")
	{
		rig.write(1, 12, 8, KVFDP_CLASS_SHORT);
		const auto c = cmds_of(q, rig, 1);
		REQUIRE(c.size() == 2);
		CHECK((c[0].member == 0 && c[0].slba == 12 && c[0].nlb == 4 && c[0].buf_off == 0));
		CHECK((c[1].member == 1 && c[1].slba == 0 && c[1].nlb == 4 &&
		       c[1].buf_off == 4 * 4096));
		for (const auto &r : q.reqs)
			CHECK(r.handle == 1);  // the class's handle on each member
	}
	SUBCASE("crossing two unit ends, the middle unit split at the transfer limit")
	{
		rig.request(2, ublk::kOpRead, 12, 24);  // 12..35
		const auto c = cmds_of(q, rig, 2);
		REQUIRE(c.size() == 4);
		CHECK((c[0].member == 0 && c[0].slba == 12 && c[0].nlb == 4 && c[0].buf_off == 0));
		CHECK((c[1].member == 1 && c[1].slba == 0 && c[1].nlb == 8 &&
		       c[1].buf_off == 4 * 4096));
		CHECK((c[2].member == 1 && c[2].slba == 8 && c[2].nlb == 8 &&
		       c[2].buf_off == 12 * 4096));
		CHECK((c[3].member == 2 && c[3].slba == 0 && c[3].nlb == 4 &&
		       c[3].buf_off == 20 * 4096));
	}
	SUBCASE("many units: 1 MiB from a row start")
	{
		rig.write(3, 64 * 3, 256, KVFDP_CLASS_MEDIUM);
		const auto c = cmds_of(q, rig, 3);
		REQUIRE(c.size() == 32);
		for (size_t i = 0; i < 32; i++) {
			const uint64_t unit = 12 + i / 2;
			CHECK(c[i].member == unit % 4);
			CHECK(c[i].slba == unit / 4 * 16 + (i % 2) * 8);
			CHECK(c[i].nlb == 8);
			CHECK(c[i].buf_off == i * 8 * 4096);
		}
		CHECK(c.size() <= IoEngine::max_subs_per_request(rig.ec));
	}
	SUBCASE("flush goes to every member; discard and write zeroes take one range per member")
	{
		rig.request(0, ublk::kOpFlush, 0, 0);
		REQUIRE(q.reqs.size() == 4);
		for (uint32_t m = 0; m < 4; m++) {
			CHECK(q.reqs[m].op == nvme::IoOp::flush);
			CHECK(q.reqs[m].member == m);
		}
		q.reqs.clear();
		rig.request(1, ublk::kOpDiscard, 10, 16 * 9);  // 10..153: rows 0..2
		REQUIRE(q.reqs.size() == 4);
		const auto per = walk(l, 10, 16 * 9);
		for (uint32_t m = 0; m < 4; m++) {
			CHECK(q.reqs[m].op == nvme::IoOp::deallocate);
			CHECK(q.reqs[m].member == m);
			CHECK(q.reqs[m].slba == per[m].front());
			CHECK(q.reqs[m].nlb == per[m].size());
		}
		q.reqs.clear();
		rig.request(2, ublk::kOpDiscard, 16 + 3, 5);  // inside member 1's unit: one command
		REQUIRE(q.reqs.size() == 1);
		CHECK((q.reqs[0].member == 1 && q.reqs[0].slba == 3 && q.reqs[0].nlb == 5));
		q.reqs.clear();
		rig.request(3, ublk::kOpWriteZeroes, 40, 30);  // 40..69: members 2, 3, 0
		REQUIRE(q.reqs.size() == 3);
		CHECK((q.reqs[0].member == 0 && q.reqs[0].slba == 16 && q.reqs[0].nlb == 6));
		CHECK((q.reqs[1].member == 2 && q.reqs[1].slba == 8 && q.reqs[1].nlb == 8));
		CHECK((q.reqs[2].member == 3 && q.reqs[2].slba == 0 && q.reqs[2].nlb == 16));
		for (const auto &[tag, res] : rig.commits.v)
			CHECK(res == 0);
	}
	SUBCASE("one piece's error fails the request, with the mapped errno, once")
	{
		q.fail_next = 0x4081;  // Capacity Exceeded, DNR: the first piece
		rig.write(0, 12, 8, KVFDP_CLASS_SHORT);
		CHECK(q.reqs.size() == 2);  // the other piece still went
		REQUIRE(rig.commits.v.size() == 1);
		CHECK(rig.commits.v[0] == std::pair<uint16_t, int>{0, -ENOSPC});
		rig.commits.v.clear();
		rig.request(1, ublk::kOpFlush, 0, 0);
		q.fail_next = -EIO;  // not reached: the flush went already
		CHECK(rig.commits.v.at(0) == std::pair<uint16_t, int>{1, 0});
		q.fail_next = 0;
	}
	SUBCASE("past the stripe's capacity: EIO, no command")
	{
		rig.request(0, ublk::kOpRead, 4 * 16 * 100 - 4, 8);
		CHECK(q.reqs.empty());
		CHECK(rig.commits.v.at(0) == std::pair<uint16_t, int>{0, -EIO});
	}
}

TEST_CASE("engine on a stripe: odd unit sizes; every piece stays in one unit and within the limit")
{
	test::NullQueue q(true);
	const StripeLayout l{3, 12};  // 48 KiB units
	Rig rig(q, l, 32 * 1024, 3 * 12 * 50);
	Lcg rng{7};
	for (int i = 0; i < 200; i++) {
		q.reqs.clear();
		const uint64_t lba = rng.next(3 * 12 * 40);
		const uint32_t nlb = 1 + static_cast<uint32_t>(rng.next(256));
		rig.request(0, ublk::kOpRead, lba, nlb);
		CAPTURE(lba);
		CAPTURE(nlb);
		REQUIRE(q.reqs.size() <= IoEngine::max_subs_per_request(rig.ec));
		uint64_t at = lba;
		for (const auto &r : q.reqs) {
			const auto p = l.map(at);
			CHECK(r.member == p.member);
			CHECK(r.slba == p.mlba);
			CHECK(r.nlb <= 8);
			CHECK(r.nlb <= p.nlb);
			CHECK(static_cast<uint8_t *>(r.buf) - rig.bufs[0] ==
			      static_cast<ptrdiff_t>((at - lba) * 4096));
			at += r.nlb;
		}
		CHECK(at == lba + nlb);
	}
}

namespace {

constexpr uint64_t kMiB = 1 << 20;

std::unique_ptr<nvme::Device> make_model(const std::string &path, uint64_t bytes,
					 uint32_t lba = 4096, uint16_t nruh = 8)
{
	model::ModelDeviceOptions o;
	o.config.logical_bytes = bytes;
	o.config.lba_size = lba;
	o.config.ru_size =
		kMiB;  // 256 LBAs: each handle writes fewer per member, so RUAMW counts them
	o.config.nruh = nruh;
	o.config.op = 0.5;
	o.data_path = path;
	auto d = model::open_model_device(o);
	REQUIRE_MESSAGE(d.ok(), d.error().message());
	return std::move(d).value();
}

uint64_t hbmw(nvme::Device &d)
{
	auto raw = d.log_page(nvme::kLidFdpStats);
	REQUIRE(raw.ok());
	auto st = nvme::parse_fdp_stats(*raw);
	REQUIRE(st.ok());
	return static_cast<uint64_t>(st->hbmw);
}

}  // namespace

TEST_CASE(
	"a stripe of three FDP SSD models: capacity, data where the layout says, bytes per handle per member")
{
	test::TempDir dir;
	const std::string a = dir.path + "/a", b = dir.path + "/b", c = dir.path + "/c";
	std::vector<nvme::StripeMemberSpec> ms;
	ms.push_back({a, make_model(a, 64 * kMiB)});
	ms.push_back({b, make_model(b, 80 * kMiB)});
	ms.push_back({c, make_model(c, 96 * kMiB)});
	nvme::StripeOptions so;
	so.stripe_bytes = 768 * 1024;  // not a power of two: 192 LBAs
	auto sd = nvme::open_stripe_device(std::move(ms), so);
	REQUIRE_MESSAGE(sd.ok(), sd.error().message());
	nvme::StripeDevice &dev = **sd;
	CHECK(nvme::as_stripe(dev) == &dev);
	CHECK(dev.layout().members == 3);
	CHECK(dev.layout().unit_nlb == 192);
	CHECK(dev.stripe_bytes() == 768 * 1024);
	// The smallest member (64 MiB = 16384 LBAs) in whole units: 85 x 192 = 16320 LBAs each.
	CHECK(dev.member_nlb() == 16320);
	CHECK(dev.info().nlb == 3 * 16320);
	CHECK(dev.info().lba_size == 4096);
	CHECK(dev.info().max_transfer == 512 * 1024);
	CHECK(dev.info().nruh == 8);
	CHECK(dev.info().path == a + "," + b + "," + c);
	CHECK(dev.members().size() == 3);
	CHECK(dev.members()[1].path == b);
	CHECK(dev.note().empty());
	CHECK(dev.fingerprint() != 0);

	// Before: each member's RUAMW per handle.
	std::vector<std::vector<nvme::Handle>> before;
	for (const auto &m : dev.members()) {
		auto hs = m.device->handles();
		REQUIRE(hs.ok());
		before.push_back(*hs);
	}

	io_uring ring{};
	REQUIRE(io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32) == 0);
	auto ioq = dev.open_queue(ring);
	REQUIRE(ioq.ok());
	Rig rig(**ioq, dev.layout(), dev.info().max_transfer, dev.info().nlb);

	// Writes of every class at odd places and sizes (inside a unit, across 1, 2 and many
	// unit ends, the stripe's last LBAs); expected bytes per (member, handle) by the walk.
	std::map<std::pair<uint32_t, uint16_t>, uint64_t> expect;
	std::vector<UniqueFd> files;
	for (const std::string &p : {a, b, c})
		files.emplace_back(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
	struct W {
		uint64_t lba;
		uint32_t nlb;
		uint8_t cls;
	};
	const uint64_t last = dev.info().nlb;
	const W writes[] = {{5, 3, KVFDP_CLASS_SHORT},
			    {190, 4, KVFDP_CLASS_MEDIUM},
			    {380, 200, KVFDP_CLASS_LONG},
			    {1000, 256, KVFDP_CLASS_EXTREME},
			    {4096, 128, KVFDP_CLASS_NOT_SET},
			    {last - 7, 7, KVFDP_CLASS_LONG},
			    {576 * 3 + 1, 255, KVFDP_CLASS_SHORT}};
	uint8_t fill = 1;
	for (const W &w : writes) {
		CAPTURE(w.lba);
		std::memset(rig.bufs[0], fill, size_t{w.nlb} * 4096);
		rig.write(0, w.lba, w.nlb, w.cls);
		REQUIRE(rig.commits.v.back() ==
			std::pair<uint16_t, int>{0, static_cast<int>(w.nlb * 4096)});
		const uint16_t h = kvfdp::placement::default_map(8)[w.cls];
		const auto per = walk(dev.layout(), w.lba, w.nlb);
		for (uint32_t m = 0; m < 3; m++)
			expect[{m, h}] += per[m].size() * 4096;
		// The bytes sit in each member's data file at the member LBA the layout gives.
		for (uint64_t x = w.lba; x < w.lba + w.nlb; x++) {
			const auto p = dev.layout().map(x);
			uint8_t got[2] = {};
			REQUIRE(::pread(files[p.member].get(), got, 2,
					static_cast<off_t>(p.mlba * 4096 + 4094)) == 2);
			CHECK(got[0] == fill);
			CHECK(got[1] == fill);
		}
		// And read back through the stripe.
		std::memset(rig.bufs[1], 0, size_t{w.nlb} * 4096);
		rig.request(1, ublk::kOpRead, w.lba, w.nlb);
		REQUIRE(rig.commits.v.back() ==
			std::pair<uint16_t, int>{1, static_cast<int>(w.nlb * 4096)});
		CHECK(std::memcmp(rig.bufs[0], rig.bufs[1], size_t{w.nlb} * 4096) == 0);
		fill++;
	}
	// One past the end is refused.
	rig.request(2, ublk::kOpRead, last, 1);
	CHECK(rig.commits.v.back() == std::pair<uint16_t, int>{2, -EIO});

	// Each member's own RUH Status: every handle lost exactly the LBAs its classes wrote
	// there; HBMW per member is the member's share; the stripe's log 0x22 is their sum.
	uint64_t total = 0;
	for (uint32_t m = 0; m < 3; m++) {
		auto hs = dev.members()[m].device->handles();
		REQUIRE(hs.ok());
		uint64_t member_bytes = 0;
		for (uint16_t h = 0; h < 8; h++) {
			CAPTURE(m);
			CAPTURE(h);
			const uint64_t written = (before[m][h].ruamw - (*hs)[h].ruamw) * 4096;
			CHECK(written == expect[{m, h}]);
			member_bytes += expect[{m, h}];
		}
		CHECK(hbmw(*dev.members()[m].device) == member_bytes);
		CHECK(member_bytes > 0);
		total += member_bytes;
	}
	CHECK(hbmw(dev) == total);
	auto sh = dev.handles();
	REQUIRE(sh.ok());
	REQUIRE(sh->size() == 8);
	uint64_t sum_before = 0, sum_after = 0;
	for (uint16_t h = 0; h < 8; h++) {
		for (uint32_t m = 0; m < 3; m++)
			sum_before += before[m][h].ruamw;
		sum_after += (*sh)[h].ruamw;
	}
	CHECK((sum_before - sum_after) * 4096 == total);

	// Discard across units fans out: every member drops its share, reads come back zero.
	rig.request(2, ublk::kOpDiscard, 380, 200);
	CHECK(rig.commits.v.back() == std::pair<uint16_t, int>{2, 0});
	rig.request(1, ublk::kOpRead, 380, 200);
	REQUIRE(rig.commits.v.back() == std::pair<uint16_t, int>{1, 200 * 4096});
	bool zero = true;
	for (size_t i = 0; i < 200 * 4096; i++)
		zero = zero && rig.bufs[1][i] == 0;
	CHECK(zero);
	rig.request(3, ublk::kOpFlush, 0, 0);
	CHECK(rig.commits.v.back() == std::pair<uint16_t, int>{3, 0});
	CHECK(dev.ruh_update(std::vector<uint16_t>{1, 2}).ok());
	CHECK(!dev.ruh_update(std::vector<uint16_t>{8}).ok());
	rig.engine.reset();
	ioq->reset();
	io_uring_queue_exit(&ring);
}

TEST_CASE("stripe refusals: one line naming the member and what to do")
{
	test::TempDir dir;
	const std::string a = dir.path + "/a", b = dir.path + "/b";
	auto refused = [](std::vector<nvme::StripeMemberSpec> ms, nvme::StripeOptions so = {}) {
		auto r = nvme::open_stripe_device(std::move(ms), so);
		REQUIRE(!r.ok());
		const std::string msg = r.error().message();
		CHECK(msg.find('\n') == std::string::npos);
		return msg;
	};
	auto two = [&](std::unique_ptr<nvme::Device> x, std::unique_ptr<nvme::Device> y,
		       std::string py = "") {
		std::vector<nvme::StripeMemberSpec> ms;
		ms.push_back({a, std::move(x)});
		ms.push_back({py.empty() ? b : py, std::move(y)});
		return ms;
	};
	SUBCASE("differing LBA sizes")
	{
		const std::string m =
			refused(two(make_model(a, 64 * kMiB), make_model(b, 64 * kMiB, 512)));
		CHECK(m.find("member 1 (" + b + ") has 512-byte LBAs but member 0 (" + a +
			     ") has 4096") != std::string::npos);
		CHECK(m.find("nvme format") != std::string::npos);
	}
	SUBCASE("the same namespace twice: the same file, a link to it")
	{
		std::string m = refused(two(make_model(a, 64 * kMiB), make_model(a, 64 * kMiB), a));
		CHECK(m.find("stripe member 1 (" + a + ") is the same namespace as member 0 (" + a +
			     "): give") != std::string::npos);
		CHECK(m.find("give each namespace once") != std::string::npos);
		const std::string link = dir.path + "/link";
		REQUIRE(::symlink(a.c_str(), link.c_str()) == 0);
		m = refused(two(make_model(a, 64 * kMiB), make_model(link, 64 * kMiB), link));
		CHECK(m.find("member 1 (" + link + ") is the same namespace") != std::string::npos);
	}
	SUBCASE("the same namespace by two paths: one wwid from two controllers")
	{
		// Two nodes named like namespaces whose sysfs wwid is the same (one namespace that
		// two controllers reach).
		test::TempDir sys;
		for (const char *n : {"nvme0n1", "nvme1n1"}) {
			::mkdir((sys.path + "/block").c_str(), 0755);
			REQUIRE(::mkdir((sys.path + "/block/" + n).c_str(), 0755) == 0);
			test::write_file(sys.path + "/block/" + n + "/wwid",
					 "eui.0011223344556677\n");
		}
		const std::string n0 = dir.path + "/ng0n1", n1 = dir.path + "/ng1n1";
		std::vector<nvme::StripeMemberSpec> ms;
		ms.push_back({n0, make_model(n0, 64 * kMiB)});
		ms.push_back({n1, make_model(n1, 64 * kMiB)});
		nvme::StripeOptions so;
		so.sysfs_root = sys.path;
		const std::string m = refused(std::move(ms), so);
		CHECK(m.find("member 1 (" + n1 + ") is the same namespace as member 0 (" + n0 +
			     ") (wwid:eui.0011223344556677)") != std::string::npos);
		CHECK(nvme::member_identity(n0, sys.path).back() == "wwid:eui.0011223344556677");
	}
	SUBCASE("a member without FDP (a plain file)")
	{
		nvme::FileDeviceOptions fo;
		fo.size_bytes = 64 * kMiB;
		auto f0 = nvme::open_file_device(a, fo);
		auto f1 = nvme::open_file_device(b, fo);
		REQUIRE(f0.ok());
		REQUIRE(f1.ok());
		const std::string m = refused(two(std::move(*f0), std::move(*f1)));
		CHECK(m.find("member 0 (" + a + ") has no FDP enabled") != std::string::npos);
		CHECK(m.find("remove it from the --device list") != std::string::npos);
	}
	SUBCASE("mixed backends")
	{
		nvme::FileDeviceOptions fo;
		fo.size_bytes = 64 * kMiB;
		auto f1 = nvme::open_file_device(b, fo);
		REQUIRE(f1.ok());
		const std::string m = refused(two(make_model(a, 64 * kMiB), std::move(*f1)));
		CHECK(m.find("member 1 (" + b + ") is a file device but member 0 is model") !=
		      std::string::npos);
	}
	SUBCASE("one member; a bad stripe size; a member smaller than one unit")
	{
		std::vector<nvme::StripeMemberSpec> one;
		one.push_back({a, make_model(a, 64 * kMiB)});
		CHECK(refused(std::move(one)).find("two or more members") != std::string::npos);
		nvme::StripeOptions so;
		so.stripe_bytes = 6000;
		CHECK(refused(two(make_model(a, 64 * kMiB), make_model(b, 64 * kMiB)), so)
			      .find("stripe size 6000") != std::string::npos);
		so.stripe_bytes = 128 * kMiB;
		CHECK(refused(two(make_model(a, 64 * kMiB), make_model(b, 64 * kMiB)), so)
			      .find("member 0 (" + a +
				    ") holds 67108864 bytes, less than one stripe unit") !=
		      std::string::npos);
	}
}

TEST_CASE("stripe handles: the fewest any member has, the others named in the note")
{
	test::TempDir dir;
	const std::string a = dir.path + "/a", b = dir.path + "/b";
	std::vector<nvme::StripeMemberSpec> ms;
	ms.push_back({a, make_model(a, 64 * kMiB, 4096, 8)});
	ms.push_back({b, make_model(b, 64 * kMiB, 4096, 4)});
	auto sd = nvme::open_stripe_device(std::move(ms));
	REQUIRE(sd.ok());
	CHECK((*sd)->info().nruh == 4);
	auto hs = (*sd)->handles();
	REQUIRE(hs.ok());
	CHECK(hs->size() == 4);
	CHECK((*sd)->note().find("stripe member 0 (" + a + ") has 8 handles, stripe member 1 (" +
				 b + ") 4") != std::string::npos);
	CHECK((*sd)->stripe_bytes() ==
	      512 * 1024);  // the default: the models' 512 KiB transfer limit
	CHECK(!(*sd)->ruh_update(std::vector<uint16_t>{4}).ok());
}

TEST_CASE(
	"ublk params of a stripe: a power-of-two unit is chunk_sectors and io_min, a power-of-two row io_opt")
{
	ublk::ParamInput in;
	in.nlb = 1u << 20;
	in.stripe_bytes = 512 * 1024;
	in.stripe_members = 4;
	auto p = ublk::make_params(in);
	REQUIRE(p.ok());
	CHECK(p->basic.chunk_sectors == 1024);
	CHECK(p->basic.io_min_shift == 19);
	CHECK(p->basic.io_opt_shift == 21);  // 2 MiB: a full row
	in.stripe_members = 3;               // a 1.5 MiB row: io_opt stays the unit
	p = ublk::make_params(in);
	REQUIRE(p.ok());
	CHECK(p->basic.io_opt_shift == 19);
	in.stripe_bytes = 768 * 1024;  // not a power of two: the engine splits; no chunk_sectors
	p = ublk::make_params(in);
	REQUIRE(p.ok());
	CHECK(p->basic.chunk_sectors == 0);
	CHECK(p->basic.io_min_shift == 12);
	in.stripe_members = 0;  // one namespace: as before
	in.stripe_bytes = 0;
	p = ublk::make_params(in);
	REQUIRE(p.ok());
	CHECK(p->basic.chunk_sectors == 0);
}

TEST_CASE(
	"stripe fingerprint: the same members, order and stripe size give the same; any change another")
{
	test::TempDir dir;
	const std::string a = dir.path + "/a", b = dir.path + "/b";
	auto fp = [&](const std::string &x, const std::string &y, uint64_t stripe) {
		std::vector<nvme::StripeMemberSpec> ms;
		ms.push_back({x, make_model(x, 64 * kMiB)});
		ms.push_back({y, make_model(y, 64 * kMiB)});
		nvme::StripeOptions so;
		so.stripe_bytes = stripe;
		auto sd = nvme::open_stripe_device(std::move(ms), so);
		REQUIRE(sd.ok());
		return (*sd)->fingerprint();
	};
	const uint64_t base = fp(a, b, 512 * 1024);
	CHECK(base != 0);
	CHECK(fp(a, b, 512 * 1024) == base);   // a restart: the same
	CHECK(fp(b, a, 512 * 1024) != base);   // swapped order
	CHECK(fp(a, b, 1024 * 1024) != base);  // another stripe size
	const std::string link = dir.path + "/link-to-a";
	REQUIRE(::symlink(a.c_str(), link.c_str()) == 0);
	CHECK(fp(link, b, 512 * 1024) == base);  // the same file by another path
}
