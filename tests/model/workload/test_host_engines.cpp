// The engines of issue 36's hosts (model/workload/hicache.hpp, mixed_host.hpp): HiCache's page
// files unlink in LRU order and in batches, KVBM's slot file is written in place within its
// extent and never deallocated, engine A's speed scales its share of the writes, and options
// that do not fit the capacity get one line naming them.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bpf/tag.h"
#include "model/workload/hicache.hpp"
#include "model/workload/mixed_host.hpp"
#include "model/workload/null_sink.hpp"

using namespace kvfdp;
using namespace kvfdp::workload;

namespace {

struct Op {
	bool write;
	uint64_t slba, nlb, writer;
	uint8_t cls;
};

class RecordingSink final : public sim::BlockSink {
public:
	void write(uint64_t slba, uint64_t nlb, uint8_t cls, uint64_t writer) override
	{
		ops.push_back({true, slba, nlb, writer, cls});
	}
	void deallocate(uint64_t slba, uint64_t nlb) override
	{
		ops.push_back({false, slba, nlb, 0, 0});
	}
	std::vector<Op> ops;
};

// Requests 100 ms apart, each of 4 blocks from a pool of 2,000 (so blocks come back).
std::vector<MooncakeRequest> small_trace(size_t n)
{
	std::vector<MooncakeRequest> t;
	uint64_t x = 12345;
	for (size_t i = 0; i < n; i++) {
		MooncakeRequest r;
		r.timestamp_ms = i * 100;
		r.input_length = 4 * kMooncakeBlockTokens;
		for (int b = 0; b < 4; b++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			r.hash_ids.push_back((x >> 33) % 2000);
		}
		t.push_back(r);
	}
	return t;
}

MixedHostConfig small_host()
{
	MixedHostConfig c;
	c.utilisation = 0.9;
	c.weights_bytes = 4ull << 30;  // 16 MiB at 1/256
	c.swap_s = 30;
	c.prompt_ttl_s = 10;
	return c;
}

constexpr uint64_t kCapacity = 256ull << 20;

std::string error_of(const MixedHostConfig &c, uint64_t capacity = kCapacity)
{
	auto r = MixedHostWorkload::validate(c, small_trace(50), capacity);
	return r ? std::string() : r.error().message();
}

// A HiCache store of one-block pages, one page per trace block, on a null device.
struct PageStore {
	explicit PageStore(uint64_t cap, double ratio)
	    : fs(std::move(*BlockFs::make(1024, 4096, sink, nullptr))),
	      disk(fs, sink, 1, 0, sim::Placement::hint, nullptr, nullptr)
	{
		HiCacheConfig c;
		c.page_blocks = 1;
		c.pages_per_block = 1;
		c.cap_blocks = cap;
		c.eviction_ratio = ratio;
		store = std::make_unique<HiCacheStore>(disk, c);
		store->record_unlinks(&unlinked);
	}
	void ask(std::vector<uint64_t> ids)
	{
		MooncakeRequest r;
		r.hash_ids = std::move(ids);
		store->request(r, 0);
	}
	NullSink sink;  // first: fs and disk keep a reference
	BlockFs fs;
	HostDisk disk;
	std::vector<uint64_t> unlinked;
	std::unique_ptr<HiCacheStore> store;
};

}  // namespace

TEST_CASE("hicache: a full cap unlinks the least recently used pages first, hits refresh them")
{
	PageStore s(3, 1.0);
	s.ask({1});
	s.ask({2});
	s.ask({3});
	s.ask({1});  // a hit: 1 becomes the most recently used
	CHECK(s.store->stats().hits == 1);
	CHECK(s.unlinked.empty());
	s.ask({4});  // evicts 2
	s.ask({5});  // evicts 3
	s.ask({6});  // evicts 1
	CHECK(s.unlinked == std::vector<uint64_t>{2, 3, 1});
	CHECK(s.store->used_blocks() == 3);
	CHECK(s.store->stats().pages_written == 6);
}

TEST_CASE("hicache: eviction unlinks a batch down to cap x eviction_ratio, oldest first")
{
	PageStore s(8, 0.5);
	for (uint64_t k = 1; k <= 8; k++)
		s.ask({k});
	s.ask({9});  // down to 8 x 0.5 - 1 = 3 pages, then 9
	CHECK(s.unlinked == std::vector<uint64_t>{1, 2, 3, 4, 5});
	CHECK(s.store->used_blocks() == 4);
	CHECK(s.store->stats().eviction_batches == 1);
}

TEST_CASE("mixed host: engine A's slot file is written in place within its extent, never "
	  "deallocated, and overwritten once full")
{
	MixedHostWorkload w(small_trace(3000), small_host());
	RecordingSink sink;
	auto ran = w.run(sim::Placement::hint, kCapacity / 512, 512, sink, nullptr);
	INFO((ran ? std::string() : ran.error().message()));
	REQUIRE(ran);
	const MixedHostStats &st = w.stats();
	const uint64_t extent_lbas = st.a_slots * st.a_slot_blocks * 8;
	REQUIRE(extent_lbas > 0);
	CHECK(st.a_overwrites > 0);
	uint64_t a_writes = 0, deallocs = 0;
	for (const Op &op : sink.ops) {
		if (op.write && op.writer == 1) {
			a_writes++;
			CHECK(op.slba + op.nlb <= extent_lbas);
			CHECK(op.nlb == st.a_slot_blocks * 8);
			CHECK(op.slba % (st.a_slot_blocks * 8) == 0);
		} else if (op.write) {
			CHECK(op.slba >= extent_lbas);  // everyone else's files lie above it
		} else {
			deallocs++;
			CHECK(op.slba >= extent_lbas);
		}
	}
	CHECK(a_writes == st.a_pages_written);
	CHECK(deallocs > 0);  // B, the prompt cache, its index, logs and weights unlink
	CHECK(st.b.pages_unlinked > 0);
}

TEST_CASE("mixed host: engine A's speed factor scales its requests and its share of the writes")
{
	const auto trace = small_trace(3000);
	auto share_of_a = [&](double speed, MixedHostStats &out) {
		MixedHostConfig c = small_host();
		c.a_speed = speed;
		MixedHostWorkload w(trace, c);
		NullSink sink;
		REQUIRE(w.run(sim::Placement::none, kCapacity / 4096, 4096, sink, nullptr));
		out = w.stats();
		return static_cast<double>(out.bytes[0]) /
		       static_cast<double>(out.bytes[0] + out.bytes[1]);
	};
	MixedHostStats one, three;
	const double s1 = share_of_a(1, one);
	const double s3 = share_of_a(3, three);
	CHECK(one.a_requests == one.b.requests);
	CHECK(three.a_requests >= 3 * three.b.requests - 3);
	CHECK(three.a_requests <= 3 * three.b.requests + 3);
	CHECK(s3 > s1 + 0.1);
}

TEST_CASE("mixed host and hicache: options that do not fit get one line naming the option")
{
	auto one_line = [](const std::string &e, const char *option) {
		CHECK(e.find(option) != std::string::npos);
		CHECK(e.find('\n') == std::string::npos);
	};
	MixedHostConfig c = small_host();
	CHECK(error_of(c).empty());
	c.a_share = 1e-6;
	one_line(error_of(c), "--mixed-a-share");  // A's file holds no 2 pages
	c = small_host();
	c.a_share = 0.999999;
	one_line(error_of(c), "--mixed-a-share");  // B's cap holds no 2 pages
	c = small_host();
	c.page_tokens_b = 100;
	one_line(error_of(c), "--hicache-page-tokens");
	c = small_host();
	c.page_tokens_a = 0;
	one_line(error_of(c), "--mixed-a-page-tokens");
	c = small_host();
	c.a_speed = 0;
	one_line(error_of(c), "--mixed-a-speed");
	c = small_host();
	c.weights_bytes = 64ull << 30;  // 256 MiB at 1/256: twice the device
	one_line(error_of(c), "--util");
	MixedHostConfig h;
	h.engine_a = false;
	h.utilisation = 0.5;
	CHECK(error_of(h).empty());
	one_line(error_of(h, 32 << 10), "--util");  // 16 KiB of cap, pages of 32 KiB
}

TEST_CASE("hicache alone: one writer, and the oracle's pre-pass classes every write")
{
	MixedHostConfig c;
	c.engine_a = false;
	c.utilisation = 0.25;
	MixedHostWorkload w(small_trace(3000), c);
	RecordingSink sink;
	REQUIRE(w.run(sim::Placement::oracle, kCapacity / 4096, 4096, sink, nullptr));
	uint64_t writes = 0;
	std::set<uint8_t> classes;
	for (const Op &op : sink.ops)
		if (op.write) {
			writes++;
			CHECK(op.writer == 1);
			classes.insert(op.cls);
		}
	CHECK(writes == w.stats().b.pages_written);
	// Pages unlinked soon and pages alive at the end: the oracle tells them apart.
	CHECK(classes.count(KVFDP_CLASS_SHORT) == 1);
	CHECK(classes.count(KVFDP_CLASS_EXTREME) == 1);
	CHECK(w.stats().b.pages_unlinked > 0);
	CHECK(w.stats().b.write_failures == 0);
	CHECK(w.extra()["evictions"] == w.stats().b.pages_unlinked);
}
