// The tagger's userspace pieces without a kernel: the slot reader over a plain array (the
// kernel-written case is in test_tagger), per-file records and lifetime histograms, and
// the record CSV's LBA rounding.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bpf/user/files.hpp"
#include "bpf/user/slot_reader.hpp"
#include "tools/record/record.hpp"

using namespace kvfdp::bpf;

TEST_CASE("bpf: slot reader takes a fresh matching slot once and reports stale, mismatch, range")
{
	std::vector<kvfdp_tag_slot> arr(2 * 4);
	SlotReader r(arr.data(), 2, 4);
	TagInfo info;
	CHECK(r.take(0, 0, 0, 8, &info) == SlotMatch::kStale); // never written
	CHECK(r.take(2, 0, 0, 8, &info) == SlotMatch::kNoSlot);
	CHECK(r.take(0, 4, 0, 8, &info) == SlotMatch::kNoSlot);

	kvfdp_tag_slot &s = arr[1 * 4 + 3]; // queue 1, tag 3
	s.sector = 2048;
	s.sectors = 256;
	s.cls = KVFDP_CLASS_LONG;
	s.source = KVFDP_SRC_INODE_HINT;
	s.ino = 77;
	s.seq = 5;
	CHECK(static_cast<const void *>(const_cast<const kvfdp_tag_slot *>(r.slot(1, 3))) ==
	      static_cast<const void *>(&arr[7]));
	CHECK(r.take(1, 3, 2048, 8, &info) == SlotMatch::kMismatch);
	REQUIRE(r.take(1, 3, 2048, 256, &info) == SlotMatch::kOk);
	CHECK(info.cls == KVFDP_CLASS_LONG);
	CHECK(info.source == KVFDP_SRC_INODE_HINT);
	CHECK(info.ino == 77);
	CHECK(r.take(1, 3, 2048, 256, &info) == SlotMatch::kStale); // not rewritten since
	s.seq = 9;
	CHECK(r.take(1, 3, 2048, 256, &info) == SlotMatch::kOk);
	CHECK(info.seq == 9);
}

namespace {

kvfdp_event ev(uint32_t type, uint64_t ino, uint64_t t_ns, uint32_t value, uint64_t bytes = 0)
{
	kvfdp_event e{};
	e.type = type;
	e.dev = 7 << 20;
	e.ino = ino;
	e.t_ns = t_ns;
	e.value = value;
	e.bytes = bytes;
	std::strcpy(e.comm, "writer");
	return e;
}

} // namespace

TEST_CASE("bpf: file table builds records and per-class lifetime histograms from events")
{
	FileTable ft(2);
	ft.on_event(ev(KVFDP_EV_CREATE, 10, 1'000'000, KVFDP_CLASS_SHORT)); // rule class
	ft.on_event(ev(KVFDP_EV_CREATE, 11, 1'000'000, KVFDP_NO_CLASS));
	ft.on_event(ev(KVFDP_EV_HINT, 11, 2'000'000, KVFDP_CLASS_LONG));
	REQUIRE(ft.find_live(7 << 20, 10) != nullptr);
	CHECK(ft.find_live(7 << 20, 10)->cls == KVFDP_CLASS_SHORT);
	CHECK(ft.find_live(7 << 20, 10)->cls_from_rule);
	CHECK(ft.find_live(7 << 20, 11)->cls == KVFDP_CLASS_LONG);
	CHECK(ft.find_live(7 << 20, 11)->comm == "writer");

	ft.refresh_bytes([](uint32_t, uint64_t ino) { return ino * 100; });
	CHECK(ft.find_live(7 << 20, 10)->bytes == 1000);

	// A link that is not the last one keeps the file alive.
	ft.on_event(ev(KVFDP_EV_UNLINK, 10, 3'000'000, 2));
	CHECK(ft.find_live(7 << 20, 10) != nullptr);
	// The last link: 1 ms + 3 ms lifetimes.
	ft.on_event(ev(KVFDP_EV_UNLINK, 10, 2'000'000, 1, 4096));
	ft.on_event(ev(KVFDP_EV_UNLINK, 11, 4'000'000, 0, 8192));
	CHECK(ft.find_live(7 << 20, 10) == nullptr);
	const FileRecord *d = ft.find_dead(7 << 20, 11);
	REQUIRE(d != nullptr);
	CHECK(d->lifetime_ns() == 3'000'000);
	CHECK(d->bytes == 8192);
	CHECK(ft.histogram(KVFDP_CLASS_SHORT).count() == 1);
	CHECK(ft.histogram(KVFDP_CLASS_LONG).count() == 1);
	CHECK(ft.histogram(KVFDP_CLASS_LONG).sum_ns() == 3'000'000);
	// 1000 us lies in [512, 1024) us; 3000 us in [2048, 4096) us.
	CHECK(ft.histogram(KVFDP_CLASS_SHORT).buckets()[9] == 1);
	CHECK(ft.histogram(KVFDP_CLASS_LONG).buckets()[11] == 1);

	// Unknown birth: no lifetime; the dead list keeps the newest 2.
	ft.on_event(ev(KVFDP_EV_UNLINK, 12, 5'000'000, 1));
	CHECK(ft.dead().size() == 2);
	CHECK(ft.find_dead(7 << 20, 10) == nullptr);
	CHECK(ft.find_dead(7 << 20, 12)->lifetime_ns() == 0);
	CHECK(ft.histogram(KVFDP_CLASS_NOT_SET).count() == 0);
}

TEST_CASE("bpf: histogram buckets are log2 microseconds with open ends")
{
	CHECK(LifetimeHistogram::bucket_of(0) == 0);
	CHECK(LifetimeHistogram::bucket_of(1'999) == 0);
	CHECK(LifetimeHistogram::bucket_of(2'000) == 1);
	CHECK(LifetimeHistogram::bucket_of(1'000'000) == 9); // 1000 us
	CHECK(LifetimeHistogram::bucket_of(~0ull) == LifetimeHistogram::kBuckets - 1);
	CHECK(LifetimeHistogram::bucket_floor_us(10) == 1024);
}

TEST_CASE("bpf: record rows convert 512-byte sectors to 4096-byte LBAs, rounding outward")
{
	std::FILE *f = std::tmpfile();
	REQUIRE(f != nullptr);
	CHECK(write_record_row(f, 5, 'W', 16, 16, 2) == 2);   // aligned: LBA 2, 2 blocks
	CHECK(write_record_row(f, 6, 'D', 12, 8, 0) == 2);    // straddles LBAs 1 and 2
	CHECK(write_record_row(f, 7, 'W', 8, 1, 5) == 1);     // one sector
	std::rewind(f);
	char buf[128] = {};
	std::string all;
	while (std::fgets(buf, sizeof(buf), f))
		all += buf;
	std::fclose(f);
	CHECK(all == "5,W,2,2,2\n6,D,1,2,0\n7,W,1,1,5\n");
	CHECK(std::string(kRecordHeader) == "t_us,op,slba,nlb,class\n");
}
