// placement: the learner: starts as one group, splits writers whose lifetimes differ, keeps
// writers of like lifetime together (the writers that write now keep their handle), pins win,
// abandoned and remapped handles are reported
// (a new group prefers a handle no group held; a reload's pins that hand a handle to another
// owner report it too), soft state survives a save/load and a bad
// file is discarded; writers of one class each start split by class and the split is given
// up where they die alike; the data path does not allocate.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <limits>
#include <new>
#include <string>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "placement/learner.hpp"

using namespace kvfdp::placement;

namespace {

std::atomic<bool> g_count{false};
std::atomic<uint64_t> g_allocs{0};

}  // namespace

void *operator new(std::size_t n)
{
	if (g_count.load(std::memory_order_relaxed))
		g_allocs.fetch_add(1, std::memory_order_relaxed);
	if (void *p = std::malloc(n ? n : 1))
		return p;
	throw std::bad_alloc();
}
void operator delete(void *p) noexcept
{
	std::free(p);
}
void operator delete(void *p, std::size_t) noexcept
{
	std::free(p);
}

namespace {

constexpr uint64_t kChunk = 256 << 10;
constexpr uint64_t kCap = 1ull << 30;

LearnerConfig config()
{
	LearnerConfig c;
	c.nruh = 8;
	c.capacity_bytes = kCap;
	c.ru_bytes = 16 << 20;
	return c;
}

// Writers that each write chunks and delete each one `life` device bytes later (FIFO).
struct Stream {
	Key key;
	uint64_t life;    // device bytes each chunk lives
	uint32_t weight;  // chunks per round
	std::deque<uint64_t> born;
};

// Returns the handles recompute() reported abandoned meanwhile. regroup = false writes
// device_bytes with no recompute (the caller calls it once after).
std::vector<uint16_t> drive(Learner &l, std::vector<Stream> &streams, uint64_t device_bytes,
			    double &now, bool regroup = true, std::vector<uint16_t> *idle = nullptr)
{
	std::vector<uint16_t> abandoned;
	const uint64_t end = l.clock() + device_bytes;
	uint64_t next_recompute =
		regroup ? l.clock() + (16 << 20) : std::numeric_limits<uint64_t>::max();
	while (l.clock() < end) {
		for (Stream &s : streams) {
			for (uint32_t i = 0; i < s.weight; i++) {
				(void)l.place(s.key, kChunk);
				s.born.push_back(l.clock());
			}
			while (!s.born.empty() && l.clock() - s.born.front() >= s.life) {
				l.died(s.key, kChunk, l.clock() - s.born.front());
				s.born.pop_front();
			}
		}
		if (l.clock() >= next_recompute) {
			now += 1.0;
			auto r = l.recompute(now);
			abandoned.insert(abandoned.end(), r.abandoned.begin(), r.abandoned.end());
			if (idle) {
				idle->insert(idle->end(), r.idle.begin(), r.idle.end());
				const auto c = r.to_close();
				for (uint16_t h : r.idle)
					CHECK(std::count(c.begin(), c.end(), h) == 1);
			}
			next_recompute = l.clock() + (16 << 20);
		}
	}
	return abandoned;
}

std::string tmpfile_path(const char *tag)
{
	return "/tmp/kvfdp_test_learner_" + std::to_string(getpid()) + "_" + tag;
}

}  // namespace

TEST_CASE("learner: starts as none: every key on one handle")
{
	Learner l(config());
	CHECK(l.place({1, KVFDP_CLASS_SHORT}, kChunk) == 0);
	CHECK(l.place({2, KVFDP_CLASS_LONG}, kChunk) == 0);
	CHECK(l.handle_of({3, KVFDP_CLASS_MEDIUM}) == 0);
	auto r = l.recompute(1.0);
	CHECK(r.abandoned.empty());
	CHECK(l.handle_of({1, KVFDP_CLASS_SHORT}) == l.handle_of({2, KVFDP_CLASS_LONG}));
	CHECK(l.clock() == 2 * kChunk);
}

TEST_CASE(
	"learner: writers whose lifetimes differ 8x get two handles; the big one keeps its handle")
{
	Learner l(config());
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 3, {}}, {{2, 0}, kCap, 1, {}}};
	double now = 0;
	(void)drive(l, s, 4 * kCap, now);
	const uint16_t a = l.handle_of({1, 0}), b = l.handle_of({2, 0});
	CHECK(a != b);
	CHECK(a == 0);  // the writer with most writes stays where everything started
	auto g = l.groups();
	REQUIRE(g.size() == 2);
	for (const KeyInfo &k : g) {
		const double want = k.key.writer == 1 ? kCap / 8.0 : static_cast<double>(kCap);
		CHECK(k.lifetime_bytes == doctest::Approx(want).epsilon(0.25));
		CHECK(k.lifetime_s > 0);
		CHECK(k.live_bytes > 0);
		CHECK(!k.pinned);
	}
	CHECK(g[0].write_share + g[1].write_share == doctest::Approx(1.0).epsilon(0.05));
}

TEST_CASE("learner: lifetimes within the split ratio stay in one group")
{
	// The lifetime rule alone (writer 2 gives all its data one class: the writer split would
	// start it apart, and keep it so while its lifetime is not within 1.1x of writer 1's);
	// writer 1's two classes die alike enough (1.33x, both FIFO) for the class split too.
	LearnerConfig c = config();
	c.writer_split = false;
	Learner l(c);
	std::vector<Stream> s = {{{1, KVFDP_CLASS_SHORT}, kCap / 4, 1, {}},
				 {{1, KVFDP_CLASS_LONG}, kCap / 3, 1, {}},
				 {{2, KVFDP_CLASS_NOT_SET}, kCap / 4, 1, {}}};
	double now = 0;
	(void)drive(l, s, 3 * kCap, now);
	CHECK(l.handle_of({1, KVFDP_CLASS_SHORT}) == 0);
	CHECK(l.handle_of({1, KVFDP_CLASS_LONG}) == 0);
	CHECK(l.handle_of({2, KVFDP_CLASS_NOT_SET}) == 0);
}

TEST_CASE("learner: a writer with a tiny share of the writes does not get a handle")
{
	Learner l(config());
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 200, {}}, {{2, 0}, kCap * 4, 1, {}}};
	double now = 0;
	(void)drive(l, s, 2 * kCap, now);
	CHECK(l.handle_of({1, 0}) == l.handle_of({2, 0}));
}

TEST_CASE("learner: pins win at once and after recompute; pinned handles are not used by groups")
{
	Learner l(config());
	const Pin pins[] = {{7, std::nullopt, 5},
			    {std::nullopt, KVFDP_CLASS_EXTREME, 6},
			    {7, KVFDP_CLASS_SHORT, 4}};
	l.set_pins(pins);
	CHECK(l.place({7, KVFDP_CLASS_LONG}, kChunk) == 5);
	CHECK(l.place({7, KVFDP_CLASS_SHORT}, kChunk) == 4);    // writer + class is most specific
	CHECK(l.place({9, KVFDP_CLASS_EXTREME}, kChunk) == 6);  // class pin, any writer
	CHECK(l.place({9, KVFDP_CLASS_SHORT}, kChunk) == 0);
	std::vector<Stream> s = {
		{{1, 0}, kCap / 16, 2, {}}, {{2, 0}, kCap, 1, {}}, {{7, 0}, kCap / 16, 1, {}}};
	double now = 0;
	(void)drive(l, s, 3 * kCap, now);
	CHECK(l.handle_of({7, 0}) == 5);
	CHECK(l.handle_of({7, KVFDP_CLASS_LONG}) == 5);
	for (uint64_t w : {1, 2}) {
		const uint16_t h = l.handle_of({w, 0});
		CHECK(h != 4);
		CHECK(h != 5);
		CHECK(h != 6);
	}
	CHECK(l.handle_of({1, 0}) != l.handle_of({2, 0}));
	bool saw_pinned = false;
	for (const KeyInfo &k : l.groups())
		saw_pinned = saw_pinned || (k.key.writer == 7 && k.pinned);
	CHECK(saw_pinned);
	// A reload that drops the pins hands those keys to the learner at the next recompute.
	l.set_pins({});
	(void)l.recompute(now + 1);
	CHECK(l.handle_of({7, KVFDP_CLASS_LONG}) != 5);
}

TEST_CASE("learner: a reload that pins a writer to a learned group's handle reports it remapped")
{
	Learner l(config());
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 2, {}}, {{2, 0}, kCap, 1, {}}};
	double now = 0;
	(void)drive(l, s, 4 * kCap, now);
	const uint16_t h2 = l.handle_of({2, 0});
	REQUIRE(h2 != l.handle_of({1, 0}));
	// Writer 9 is pinned where writer 2's group has an open RU: that RU must be closed
	// before writer 9's data fills it.
	const Pin pins[] = {{9, std::nullopt, h2}};
	l.set_pins(pins);
	CHECK(l.place({9, 0}, kChunk) == h2);
	const RecomputeResult r = l.recompute(now + 1);
	CHECK(r.abandoned.empty());
	REQUIRE(r.remapped.size() == 1);
	CHECK(r.remapped[0] == h2);
	CHECK(l.handle_of({2, 0}) != h2);
	CHECK(l.handle_of({9, 0}) == h2);
	// The same pins again hand nothing over.
	l.set_pins(pins);
	const RecomputeResult r2 = l.recompute(now + 2);
	CHECK(r2.remapped.empty());
	CHECK(r2.abandoned.empty());
}

TEST_CASE(
	"learner: a reload that moves a pin reports the handle remapped; one that drops it, abandoned")
{
	Learner l(config());
	const Pin first[] = {{7, std::nullopt, 5}};
	l.set_pins(first);
	std::vector<Stream> s = {
		{{1, 0}, kCap / 8, 2, {}}, {{2, 0}, kCap, 1, {}}, {{7, 0}, kCap / 8, 1, {}}};
	double now = 0;
	(void)drive(l, s, 3 * kCap, now);
	REQUIRE(l.handle_of({7, 0}) == 5);
	// Handle 5 goes from writer 7 to writer 8: 7's open RU there is handed over.
	const Pin moved[] = {{8, std::nullopt, 5}};
	l.set_pins(moved);
	const RecomputeResult r = l.recompute(now + 1);
	CHECK(r.abandoned.empty());
	REQUIRE(r.remapped.size() == 1);
	CHECK(r.remapped[0] == 5);
	CHECK(l.handle_of({7, 0}) == l.handle_of({1, 0}));  // same lifetime: writer 1's group
	// Writer 8 writes there; then its pin is dropped. No group keeps 5, which holds 8's open RU.
	for (int i = 0; i < 8; i++)
		CHECK(l.place({8, 0}, kChunk) == 5);
	l.set_pins({});
	const RecomputeResult r2 = l.recompute(now + 2);
	CHECK(r2.remapped.empty());
	REQUIRE(r2.abandoned.size() == 1);
	CHECK(r2.abandoned[0] == 5);
	CHECK(l.handle_of({8, 0}) != 5);
}

TEST_CASE("learner: a group that stops writing is merged and its handle reported abandoned")
{
	Learner l(config());
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 2, {}}, {{2, 0}, kCap, 1, {}}};
	double now = 0;
	(void)drive(l, s, 4 * kCap, now);
	const uint16_t lonely = l.handle_of({2, 0});
	REQUIRE(lonely != l.handle_of({1, 0}));
	// Writer 2 stops; its data is deleted; only writer 1 writes on.
	while (!s[1].born.empty()) {
		l.died(s[1].key, kChunk, l.clock() - s[1].born.front());
		s[1].born.pop_front();
	}
	s[1].weight = 0;
	bool abandoned = false;
	const uint64_t end = l.clock() + 4 * kCap;
	while (l.clock() < end && !abandoned) {
		std::vector<Stream> one = {s[0]};
		for (uint16_t h : drive(l, one, 64 << 20, now))
			abandoned = abandoned || h == lonely;
		s[0] = one[0];
	}
	CHECK(abandoned);
	CHECK(l.handle_of({2, 0}) == l.handle_of({1, 0}));
}

TEST_CASE("learner: a handle whose group pauses is reported idle once per pause")
{
	Learner l(config());
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 2, {}}, {{2, 0}, kCap, 1, {}}};
	double now = 0;
	(void)drive(l, s, 4 * kCap, now);
	const uint16_t paused = l.handle_of({2, 0});
	REQUIRE(paused != l.handle_of({1, 0}));
	// Writer 2 pauses with its data live. At a third of the writes, it would have written
	// idle_close_rus (16) units of 16 MiB in 768 MiB of device writes: its handle is reported
	// once, and not again while the pause lasts (and before its decayed share falls under
	// min_group_share, about 1.4 capacities in, and the group is merged).
	s[1].weight = 0;
	s[1].life = 1000 * kCap;
	std::vector<uint16_t> idle;
	(void)drive(l, s, kCap / 2, now, true, &idle);
	CHECK(std::count(idle.begin(), idle.end(), paused) == 0);
	(void)drive(l, s, 3 * kCap / 4, now, true, &idle);
	CHECK(std::count(idle.begin(), idle.end(), paused) == 1);
	CHECK(std::count(idle.begin(), idle.end(), l.handle_of({1, 0})) == 0);  // it writes
	REQUIRE(l.handle_of({2, 0}) == paused);
	// It writes again, then pauses again: reported once more.
	s[1].weight = 1;
	(void)drive(l, s, kCap, now, true, &idle);
	REQUIRE(l.handle_of({2, 0}) == paused);
	s[1].weight = 0;
	(void)drive(l, s, 5 * kCap / 4, now, true, &idle);
	CHECK(std::count(idle.begin(), idle.end(), paused) == 2);

	// idle_close_rus 0: never.
	LearnerConfig c = config();
	c.idle_close_rus = 0;
	Learner m(c);
	std::vector<Stream> t = {{{1, 0}, kCap / 8, 2, {}}, {{2, 0}, kCap, 1, {}}};
	(void)drive(m, t, 4 * kCap, now);
	t[1].weight = 0;
	t[1].life = 1000 * kCap;
	std::vector<uint16_t> none;
	(void)drive(m, t, 2 * kCap, now, true, &none);
	CHECK(none.empty());
}

TEST_CASE("learner: writers that start after a fill are parted at once: a new class at its "
	  "first recompute, writers of one class at their second")
{
	// A fill (writer 9, no hint) writes the capacity; then four SHORT writers and nothing
	// else. Small units, so the spare room holds every group's open unit.
	LearnerConfig c = config();
	c.ru_bytes = 1 << 20;
	Learner l(c);
	std::vector<Stream> fill = {{{9, 0}, 1000 * kCap, 1, {}}};
	double now = 0;
	(void)drive(l, fill, kCap, now, false);
	(void)l.recompute(now += 1);
	// Writer w writes w tenths of the writes (writers of equal shares would be one part:
	// the ranks of one engine). They start 1 MiB before a recompute.
	std::vector<Stream> s;
	for (uint64_t w = 1; w <= 4; w++)
		s.push_back({{w, KVFDP_CLASS_SHORT}, kCap / 4, static_cast<uint32_t>(w), {}});
	(void)drive(l, fill, 15 << 20, now, false);
	(void)drive(l, s, 1 << 20, now, false);
	(void)l.recompute(now += 1);
	// First recompute: their decayed shares are a few writes' worth (0.2% together, under
	// min_group_share), yet SHORT, new to the device, is cut from the fill's group.
	const uint16_t fill_h = l.handle_of({9, 0});
	for (uint64_t w = 1; w <= 4; w++)
		CHECK(l.handle_of({w, KVFDP_CLASS_SHORT}) != fill_h);
	(void)drive(l, s, 16 << 20, now, false);
	(void)l.recompute(now += 1);
	// Second recompute: decayed shares of 0.3% to 1.3% (2% of the writes is 1.7%), but they
	// write 10% to 40% of the writes now: the writer split parts them all.
	for (uint64_t a = 1; a <= 4; a++)
		for (uint64_t b = a + 1; b <= 4; b++)
			CHECK(l.handle_of({a, KVFDP_CLASS_SHORT}) !=
			      l.handle_of({b, KVFDP_CLASS_SHORT}));
}

TEST_CASE("learner: writers that come after a fill keep the handle they write to; the fill, "
	  "which writes no more, is the group that moves")
{
	// Two ranks of one engine (writers 1 and 2, no hint, equal shares) write a chunk each as
	// they start; a fill (writer 9, no hint) writes the capacity and stops; then the ranks
	// overwrite in place, all the device's writes. They are on the fill's handle and fill its
	// open unit from then on.
	Learner l(config());
	(void)l.place({1, 0}, kChunk);
	(void)l.place({2, 0}, kChunk);
	std::vector<Stream> fill = {{{9, 0}, 1000 * kCap, 1, {}}};
	double now = 0;
	(void)drive(l, fill, kCap, now, false);
	(void)l.recompute(now += 1);
	const uint16_t h0 = l.handle_of({9, 0});
	REQUIRE(l.handle_of({1, 0}) == h0);
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 1, {}}, {{2, 0}, kCap / 8, 1, {}}};
	// Recomputes every 16 MiB, until the ranks are parted from the fill by lifetime.
	uint64_t written = 0;
	while (l.handle_of({1, 0}) == l.handle_of({9, 0}) && written < kCap) {
		(void)drive(l, s, 16 << 20, now);
		written += 16 << 20;
	}
	REQUIRE(l.handle_of({1, 0}) == l.handle_of({2, 0}));
	REQUIRE(l.handle_of({9, 0}) != l.handle_of({1, 0}));
	// Their decayed shares, counted since their first chunks, are still under the fill's,
	// but the fill writes nothing now: the ranks keep the handle whose open unit is theirs.
	CHECK(l.handle_of({1, 0}) == h0);
}

namespace {

// One recompute in which a group goes and a new one comes. Writers 1 (short-lived, most
// writes) and 2 (long-lived) are split onto handles 0 and `gone`; then writer 2 stops and its
// data is deleted, and a new writer 3, shorter-lived than 1, starts on handle 0 (where new
// keys go). One recompute after 2 capacities sees three lifetimes: writer 2, now too small
// for a handle, joins writer 1's group, which keeps handle 0; writer 3's group lost its only
// claim (handle 0) to the bigger group and takes a free handle.
struct Handover {
	uint16_t gone = 0;  // writer 2's handle before
	RecomputeResult r;  // the recompute that hands over
};

Handover handover(Learner &l)
{
	Handover out;
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 3, {}}, {{2, 0}, kCap, 1, {}}};
	double now = 0;
	(void)drive(l, s, 4 * kCap, now);
	REQUIRE(l.handle_of({1, 0}) == 0);
	out.gone = l.handle_of({2, 0});
	REQUIRE(out.gone != 0);
	while (!s[1].born.empty()) {
		l.died(s[1].key, kChunk, l.clock() - s[1].born.front());
		s[1].born.pop_front();
	}
	std::vector<Stream> next = {s[0], {{3, 0}, kCap / 64, 2, {}}};
	(void)drive(l, next, 2 * kCap, now, false);
	REQUIRE(l.handle_of({3, 0}) == 0);
	out.r = l.recompute(now + 1);
	REQUIRE(l.handle_of({1, 0}) == 0);
	REQUIRE(l.handle_of({2, 0}) == 0);
	return out;
}

}  // namespace

TEST_CASE("learner: a new group takes a handle no group held before the one a group just left")
{
	Learner l(config());  // 8 handles: 6 never used
	const Handover h = handover(l);
	const uint16_t got = l.handle_of({3, 0});
	CHECK(got != 0);
	CHECK(got != h.gone);  // not the RU writer 2's data fills
	CHECK(h.r.remapped.empty());
	REQUIRE(h.r.abandoned.size() == 1);
	CHECK(h.r.abandoned[0] == h.gone);
	CHECK(h.r.groups == 2);
}

TEST_CASE(
	"learner: with no clean handle left, the one a group just left is handed over and reported remapped")
{
	LearnerConfig c = config();
	c.nruh = 2;
	Learner l(c);
	const Handover h = handover(l);
	REQUIRE(h.gone == 1);
	CHECK(l.handle_of({3, 0}) == 1);
	REQUIRE(h.r.remapped.size() == 1);
	CHECK(h.r.remapped[0] == 1);
	CHECK(h.r.abandoned.empty());
	CHECK(h.r.generation >= 1);
}

TEST_CASE("learner: soft state survives save and load; a bad file is discarded with one line")
{
	const std::string path = tmpfile_path("state");
	Learner a(config());
	a.set_writer_name(2, "weights");
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 3, {}}, {{2, 0}, kCap, 1, {}}};
	double now = 0;
	(void)drive(a, s, 3 * kCap, now);
	REQUIRE(a.handle_of({1, 0}) != a.handle_of({2, 0}));
	REQUIRE(a.save(path).ok());

	Learner b(config());
	REQUIRE(b.load(path).ok());
	CHECK(b.handle_of({1, 0}) == a.handle_of({1, 0}));
	CHECK(b.handle_of({2, 0}) == a.handle_of({2, 0}));
	CHECK(b.clock() == a.clock());
	auto r = b.recompute(now + 1);
	CHECK(r.abandoned.empty());
	CHECK(b.handle_of({2, 0}) == a.handle_of({2, 0}));

	// Missing: nothing restored, no error.
	Learner c(config());
	CHECK(c.load(path + ".missing").ok());

	// Corrupt: one flipped byte.
	{
		std::ifstream in(path);
		std::string text((std::istreambuf_iterator<char>(in)),
				 std::istreambuf_iterator<char>());
		text[text.size() / 2] ^= 1;
		std::ofstream(path + ".bad") << text;
		std::ofstream(path + ".trunc") << text.substr(0, text.size() / 2);
	}
	for (const char *suffix : {".bad", ".trunc"}) {
		Learner d(config());
		auto e = d.load(path + suffix);
		REQUIRE(!e.ok());
		const std::string msg = e.error().message();
		CHECK(msg.rfind("learned state " + path + suffix + ": ", 0) == 0);
		CHECK(msg.find('\n') == std::string::npos);
		CHECK(d.place({1, 0}, kChunk) == 0);  // usable, from scratch
		CHECK(d.groups().size() == 1);
	}
	// Foreign: saved for another device.
	LearnerConfig other = config();
	other.nruh = 4;
	Learner f(other);
	auto e = f.load(path);
	REQUIRE(!e.ok());
	CHECK(e.error().message().find("saved for 8 handles, the device has 4") !=
	      std::string::npos);
	std::ofstream(path + ".foreign") << "[placement]\nshort = 1\n";
	CHECK(!f.load(path + ".foreign").ok());
	CHECK(!f.load("/dev/zero").ok());
	for (const char *suffix : {"", ".bad", ".trunc", ".foreign"})
		std::remove((path + suffix).c_str());
}

TEST_CASE("learner: past kMaxKeys keys the rest share the overflow, placed on the main group")
{
	Learner l(config());
	for (uint64_t w = 0; w < Learner::kMaxKeys + 100; w++)
		(void)l.place({w, 0}, 4096);
	CHECK(l.overflow_bytes() >= 100 * 4096);
	CHECK(l.groups().size() <= Learner::kMaxKeys);
	CHECK(l.place({999999, 0}, 4096) == 0);
}

// Whether a writer never seen before gets a key of its own (the table has room for it).
static bool learns_new_writer(Learner &l, uint64_t writer, double &now)
{
	(void)l.place({writer, 0}, kChunk);
	(void)l.recompute(now += 1);
	for (const KeyInfo &k : l.groups())
		if (k.key.writer == writer)
			return true;
	return false;
}

TEST_CASE("learner: writers that come and go retire; 10,000 writer ids never fill the table")
{
	// Each writer id writes for 1/256 of the capacity, its chunks dying half a capacity
	// after their write (as a restarted engine's store keeps turning over under its new id:
	// the old id's data dies later).
	Learner l(config());
	double now = 0;
	const uint64_t writers = 10000;
	const uint64_t per_writer = kCap / 256;
	std::deque<std::pair<Key, uint64_t>> born;
	uint64_t next_recompute = 16 << 20;
	for (uint64_t w = 1; w <= writers; w++) {
		const Key k{w, KVFDP_CLASS_NOT_SET};
		for (uint64_t b = 0; b < per_writer; b += kChunk * 4) {
			(void)l.place(k, kChunk * 4);
			born.emplace_back(k, l.clock());
			while (!born.empty() && l.clock() - born.front().second >= kCap / 2) {
				l.died(born.front().first, kChunk * 4,
				       l.clock() - born.front().second);
				born.pop_front();
			}
			if (l.clock() >= next_recompute) {
				(void)l.recompute(now += 1);
				next_recompute = l.clock() + (16 << 20);
			}
		}
	}
	CHECK(l.overflow_bytes() == 0);
	// Keys idle for less than retire_idle (2 capacities, 512 writers) are still there.
	CHECK(l.key_count() < Learner::kMaxKeys / 4);
	CHECK(l.retired_keys() >= writers - Learner::kMaxKeys / 4);
	CHECK(l.groups().size() == l.key_count());
	// A brand-new writer is still learned: it has a slot of its own.
	CHECK(learns_new_writer(l, writers + 1, now));
}

TEST_CASE("learner: short jobs that die within a capacity retire under pressure; the table "
	  "never fills")
{
	// 10,000 writer ids, each writes 1/8192 of the capacity and its data dies at once (a short
	// job deleting its files): 1.2 capacities in all, less than retire_idle, so only the
	// pressure rule (the table 3/4 full) makes room.
	Learner l(config());
	double now = 0;
	const uint64_t writers = 10000;
	const uint64_t per_writer = kCap / 8192;
	uint64_t next_recompute = 16 << 20;
	for (uint64_t w = 1; w <= writers; w++) {
		const Key k{w, KVFDP_CLASS_NOT_SET};
		const uint64_t t = l.clock();
		(void)l.place(k, per_writer);
		l.died(k, per_writer, l.clock() - t);
		if (l.clock() >= next_recompute) {
			(void)l.recompute(now += 1);
			next_recompute = l.clock() + (16 << 20);
		}
	}
	CHECK(l.overflow_bytes() == 0);
	CHECK(l.key_count() <= Learner::kMaxKeys);
	CHECK(l.retired_keys() >= writers - Learner::kMaxKeys);
	CHECK(learns_new_writer(l, writers + 1, now));
}

TEST_CASE("learner: an idle key that holds live data stays until retire_any; later deaths of a "
	  "retired key count nowhere")
{
	LearnerConfig c = config();
	c.retire_idle = 1;
	c.retire_any = 3;
	Learner l(c);
	double now = 0;
	const Key weights{7, KVFDP_CLASS_EXTREME}, gone{8, KVFDP_CLASS_SHORT};
	(void)l.place(weights, kCap / 16);  // holds a 16th of the capacity, never dies
	(void)l.place(gone, kChunk);
	l.died(gone, kChunk, 1);  // holds nothing
	std::vector<Stream> s = {{{1, 0}, kCap / 4, 1, {}}};
	(void)drive(l, s, kCap + kCap / 8, now);
	bool has_weights = false, has_gone = false;
	for (const KeyInfo &k : l.groups()) {
		has_weights = has_weights || k.key == weights;
		has_gone = has_gone || k.key == gone;
	}
	CHECK(has_weights);
	CHECK_FALSE(has_gone);
	CHECK(l.retired_keys() == 1);
	// The retired key's slot may hold a new key: a late death of the old one finds nothing.
	l.died(gone, kChunk, kCap);
	(void)drive(l, s, 2 * kCap, now);
	has_weights = false;
	for (const KeyInfo &k : l.groups()) {
		has_weights = has_weights || k.key == weights;
		CHECK(k.died_bytes <= k.written_bytes);
	}
	CHECK_FALSE(has_weights);
	CHECK(l.retired_keys() == 2);
	// It comes back as a new key, from nothing.
	(void)l.place(gone, kChunk);
	for (const KeyInfo &k : l.groups())
		if (k.key == gone)
			CHECK(k.written_bytes == kChunk);
}

TEST_CASE("learner: save writes mode 0600 and leaves no temporary file; another device's file "
	  "is refused, one without an identity is taken")
{
	const std::string path = tmpfile_path("device");
	Learner a(config());
	a.set_device_identity("nguid-0011");
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 3, {}}, {{2, 0}, kCap, 1, {}}};
	double now = 0;
	(void)drive(a, s, kCap, now);
	(void)::umask(0);
	REQUIRE(a.save(path).ok());
	REQUIRE(a.save(path).ok());
	(void)::umask(022);
	struct stat st {};
	REQUIRE(::stat(path.c_str(), &st) == 0);
	CHECK((st.st_mode & 0777) == 0600);
	const std::string dir = "/tmp/";
	const std::string base = path.substr(dir.size());
	unsigned temps = 0;
	if (DIR *d = ::opendir("/tmp")) {
		while (const dirent *e = ::readdir(d))
			temps += std::string(e->d_name).rfind(base + ".tmp", 0) == 0;
		::closedir(d);
	}
	CHECK(temps == 0);

	Learner same(config());
	same.set_device_identity("nguid-0011");
	CHECK(same.load(path).ok());
	CHECK(same.handle_of({1, 0}) == a.handle_of({1, 0}));

	Learner other(config());
	other.set_device_identity("nguid-0022");
	auto e = other.load(path);
	REQUIRE_FALSE(e.ok());
	CHECK(e.error().message() ==
	      "learned state " + path + ": saved for device nguid-0011, this is nguid-0022");
	CHECK(other.groups().empty());

	// A version 3 file has no identity: the device that loads it takes it.
	const std::string body = "kvfdp-learner 3\nnruh 8\nclock 1000 900 10 8 0\n";
	uint64_t h = 0xcbf29ce484222325ull;
	for (unsigned char c : body) {
		h ^= c;
		h *= 0x100000001b3ull;
	}
	std::ofstream(path) << body << "end " << h << "\n";
	// A temporary file a crashed save left is removed by the next load.
	std::ofstream(path + ".tmp.1.2.3") << "partial";
	Learner old(config());
	old.set_device_identity("nguid-0022");
	CHECK(old.load(path).ok());
	CHECK(old.clock() == 1000);
	CHECK(::access((path + ".tmp.1.2.3").c_str(), F_OK) != 0);
	std::remove(path.c_str());
}

TEST_CASE("learner: place, handle_of and died do not allocate")
{
	Learner l(config());
	(void)l.place({1, 0}, kChunk);  // first sight of key 1
	g_allocs = 0;
	g_count = true;
	for (uint64_t i = 0; i < 10000; i++) {
		(void)l.place({i % 50, static_cast<uint8_t>(i % 6)}, kChunk);
		(void)l.handle_of({i % 70, 2});
		l.died({i % 50, static_cast<uint8_t>(i % 6)}, kChunk, i);
	}
	g_count = false;
	CHECK(g_allocs.load() == 0);
}

TEST_CASE("learner: key names (identities) are kept across save and load; a name is asked once")
{
	const std::string path = tmpfile_path("names");
	Learner a(config());
	std::vector<Stream> s = {{{1, 0}, kCap / 8, 3, {}}, {{2, 0}, kCap, 1, {}}};
	double now = 0;
	(void)drive(a, s, kCap, now);
	unsigned asked = 0;
	auto name_of = [&asked](uint64_t w) {
		asked++;
		return w == 1 ? std::string("/kubepods.slice/pod*.slice/a b@engine")
			      : std::string();
	};
	a.name_keys(name_of);
	const unsigned first = asked;
	CHECK(first == 2);
	a.name_keys(name_of);  // writer 1 is named: only writer 2 is asked again
	CHECK(asked == first + 1);
	REQUIRE(a.save(path).ok());

	Learner b(config());
	REQUIRE(b.load(path).ok());
	std::string n1 = "?", n2 = "?";
	for (const KeyInfo &k : b.groups())
		(k.key.writer == 1 ? n1 : n2) = k.writer_name;
	CHECK(n1 == "/kubepods.slice/pod*.slice/a b@engine");
	CHECK(n2.empty());
	::unlink(path.c_str());
}

TEST_CASE("learner: a version 1 state file (no death ages) is still read")
{
	// What a kvfdpd before the death-age buckets saved: one key, writer 5 class MEDIUM on
	// handle 3 (key word (5 << 3 | 3) + 1 = 44), bytes x age as a double.
	const std::string body = "kvfdp-learner 1\nnruh 8\nclock 1000 900 10 8 0\n"
				 "key 44 3 1000 400 4e+08 1000 400 4e+08 0.5 4e+08 400 1000000 0\n";
	uint64_t h = 0xcbf29ce484222325ull;
	for (unsigned char c : body) {
		h ^= c;
		h *= 0x100000001b3ull;
	}
	const std::string path = tmpfile_path("v1");
	{
		std::ofstream f(path);
		f << body << "end " << h << "\n";
	}
	Learner l(config());
	REQUIRE(l.load(path));
	CHECK(l.handle_of({5, KVFDP_CLASS_MEDIUM}) == 3);
	CHECK(l.clock() == 1000);
	auto g = l.groups();
	REQUIRE(g.size() == 1);
	CHECK(g[0].died_bytes == 400);
	// Saved again, it is the current version and reads back the same.
	REQUIRE(l.save(path));
	Learner again(config());
	REQUIRE(again.load(path));
	CHECK(again.handle_of({5, KVFDP_CLASS_MEDIUM}) == 3);
	std::ifstream in(path);
	std::string first;
	std::getline(in, first);
	CHECK(first == "kvfdp-learner 6");
	std::remove(path.c_str());
}

TEST_CASE("learner: writers of one class each start split by class; a part that dies like "
	  "its group is given up for good, across a save and load")
{
	// Equal lifetimes: only the class split parts them, and once both have lived two
	// lifetimes and die alike (both in write order) the part is given up.
	const std::string path = tmpfile_path("split");
	Learner l(config());
	std::vector<Stream> s = {{{1, KVFDP_CLASS_SHORT}, kCap / 4, 1, {}},
				 {{2, KVFDP_CLASS_MEDIUM}, kCap / 4, 1, {}}};
	double now = 0;
	(void)drive(l, s, kCap / 8, now);
	CHECK(l.handle_of({1, KVFDP_CLASS_SHORT}) != l.handle_of({2, KVFDP_CLASS_MEDIUM}));
	(void)drive(l, s, 2 * kCap, now);
	CHECK(l.handle_of({1, KVFDP_CLASS_SHORT}) == l.handle_of({2, KVFDP_CLASS_MEDIUM}));
	REQUIRE(l.save(path));
	Learner b(config());
	REQUIRE(b.load(path));
	(void)b.recompute(now + 1);
	CHECK(b.handle_of({1, KVFDP_CLASS_SHORT}) == b.handle_of({2, KVFDP_CLASS_MEDIUM}));
	std::remove(path.c_str());

	// With class_split_room 0, or reclaim units too large for the spare room to hold the
	// split's open units, nothing is split.
	for (const bool off : {true, false}) {
		LearnerConfig c = config();
		if (off)
			c.class_split_room = 0;
		else
			c.ru_bytes = kCap / 16;  // 0.5 x 0.07 x 16 units: not one
		Learner m(c);
		std::vector<Stream> t = {{{1, KVFDP_CLASS_SHORT}, kCap / 4, 1, {}},
					 {{2, KVFDP_CLASS_MEDIUM}, kCap / 4, 1, {}}};
		double n = 0;
		(void)drive(m, t, kCap / 8, n);
		CHECK(m.handle_of({1, KVFDP_CLASS_SHORT}) == m.handle_of({2, KVFDP_CLASS_MEDIUM}));
	}
}

TEST_CASE("learner: a writer seen for the first time is parted by class from a measured "
	  "group, and a new key of its class starts there; a known writer's new class is not")
{
	// Writers 1 and 2, both SHORT, are measured apart by lifetime. Then writer 1 restarts
	// under a new id, 11, as a service without a stable identity does: nothing is known of 11
	// but its class. Its first Little's law estimate (a few writes' share) puts it beside
	// writer 2, whose group's class is its own. Small units, so the spare room holds a part.
	LearnerConfig c = config();
	c.ru_bytes = 1 << 20;
	const std::vector<Stream> writers = {{{1, KVFDP_CLASS_SHORT}, kCap / 16, 2, {}},
					     {{2, KVFDP_CLASS_SHORT}, kCap / 2, 1, {}}};
	Learner l(c);
	std::vector<Stream> s = writers;
	double now = 0;
	(void)drive(l, s, 3 * kCap, now);
	const uint16_t h1 = l.handle_of({1, KVFDP_CLASS_SHORT});
	const uint16_t h2 = l.handle_of({2, KVFDP_CLASS_SHORT});
	REQUIRE(h1 != h2);
	// The new id's first writes go where its class's writes went.
	CHECK(l.handle_of({11, KVFDP_CLASS_SHORT}) == h1);
	std::vector<Stream> t = {{{11, KVFDP_CLASS_SHORT}, kCap / 16, 2, {}}, s[1]};
	(void)drive(l, t, 16 << 20, now);
	// At the recompute that first sees it: a part of its own, where the next new SHORT id
	// starts too.
	const uint16_t young = l.handle_of({11, KVFDP_CLASS_SHORT});
	CHECK(young != h1);
	CHECK(young != h2);
	CHECK(l.handle_of({12, KVFDP_CLASS_SHORT}) == young);

	// A known writer's first LONG writes are not a young writer's, and no new SHORT id starts
	// beside them: writer 1 now labels with two classes, and the class split parts its LONG,
	// of which nothing is measured, as hint places it (class_split.hpp).
	Learner m(c);
	std::vector<Stream> u = writers;
	double n = 0;
	(void)drive(m, u, 3 * kCap, n);
	u.push_back({{1, KVFDP_CLASS_LONG}, kCap / 16, 2, {}});
	(void)drive(m, u, 16 << 20, n);
	const uint16_t long1 = m.handle_of({1, KVFDP_CLASS_LONG});
	CHECK(long1 != m.handle_of({1, KVFDP_CLASS_SHORT}));
	CHECK(long1 != m.handle_of({2, KVFDP_CLASS_SHORT}));
	CHECK(m.handle_of({12, KVFDP_CLASS_SHORT}) != long1);
}

TEST_CASE("learner: writers replaced faster than they are measured are grouped by class; "
	  "writers that keep their ids never are")
{
	// A SHORT and a LONG writer restart under new ids at every recompute, as services without
	// a stable identity that restart every 16 MiB of writes do; the data of the old ids goes
	// on dying. Nothing is measured of an id while it writes.
	Learner l(config());
	std::vector<Stream> s;
	double now = 0;
	for (uint64_t r = 0; r < 12; r++) {
		for (Stream &old : s)
			old.weight = 0;
		s.push_back({{100 + r, KVFDP_CLASS_SHORT}, kCap / 64, 1, {}});
		s.push_back({{200 + r, KVFDP_CLASS_LONG}, kCap / 4, 1, {}});
		(void)drive(l, s, 16 << 20, now);
	}
	CHECK(l.churn_grouping());
	// By class: a gone SHORT id shares its handle with the SHORT id writing now, and LONG is
	// apart from both.
	const uint16_t short_now = l.handle_of({111, KVFDP_CLASS_SHORT});
	CHECK(l.handle_of({104, KVFDP_CLASS_SHORT}) == short_now);
	CHECK(l.handle_of({211, KVFDP_CLASS_LONG}) != short_now);

	// The same writers under ids they keep: measured, grouped by the learner's own rules.
	Learner k(config());
	std::vector<Stream> t = {{{1, KVFDP_CLASS_SHORT}, kCap / 64, 1, {}},
				 {{2, KVFDP_CLASS_LONG}, kCap / 4, 1, {}}};
	double n = 0;
	for (int r = 0; r < 12; r++)
		(void)drive(k, t, 16 << 20, n);
	CHECK(!k.churn_grouping());
}
