// The tagger's userspace pieces without a kernel: the slot reader over a plain array (the
// kernel-written case is in test_tagger), per-file records and lifetime histograms, the
// record CSV's LBA rounding, and request-disk discovery on fake sysfs trees.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bpf/user/devnum.hpp"
#include "bpf/user/disks.hpp"
#include "bpf/user/files.hpp"
#include "bpf/user/slot_reader.hpp"
#include "tests/support/temp_files.hpp"
#include "cli/record/record.hpp"

using namespace kvfdp::bpf;

TEST_CASE("bpf: slot reader takes a fresh matching slot once and reports stale, mismatch, range")
{
	std::vector<kvfdp_tag_slot> arr(2 * 4);
	SlotReader r(arr.data(), 2, 4);
	TagInfo info;
	CHECK(r.take(0, 0, 0, 8, &info) == SlotMatch::kStale);  // never written
	CHECK(r.take(2, 0, 0, 8, &info) == SlotMatch::kNoSlot);
	CHECK(r.take(0, 4, 0, 8, &info) == SlotMatch::kNoSlot);

	kvfdp_tag_slot &s = arr[1 * 4 + 3];  // queue 1, tag 3
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
	CHECK(r.take(1, 3, 2048, 256, &info) == SlotMatch::kStale);  // not rewritten since
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

}  // namespace

TEST_CASE("bpf: file table keeps at most max_live live records, dropping the oldest created")
{
	FileTable ft(4, 3);
	CHECK(ft.max_live() == 3);
	for (uint64_t ino = 1; ino <= 3; ino++)
		ft.on_event(ev(KVFDP_EV_CREATE, ino, ino * 1000, KVFDP_NO_CLASS));
	// A hint of a live file and a re-create of an inode number do not count as new records.
	ft.on_event(ev(KVFDP_EV_HINT, 1, 5000, KVFDP_CLASS_LONG));
	ft.on_event(ev(KVFDP_EV_CREATE, 2, 6000, KVFDP_NO_CLASS));
	CHECK(ft.live_count() == 3);
	CHECK(ft.live_evictions() == 0);
	// A fourth file (a rename storm whose replaced files no hook saw) drops the oldest: 1.
	ft.on_event(ev(KVFDP_EV_CREATE, 4, 7000, KVFDP_NO_CLASS));
	CHECK(ft.live_count() == 3);
	CHECK(ft.live_evictions() == 1);
	CHECK(ft.find_live(7 << 20, 1) == nullptr);
	CHECK(ft.find_live(7 << 20, 4) != nullptr);
	// An unlinked record leaves the order too: the next drops are 2, then 3, then the new ones.
	ft.on_event(ev(KVFDP_EV_UNLINK, 4, 8000, 1));
	for (uint64_t ino = 10; ino < 10'010; ino++)
		ft.on_event(ev(KVFDP_EV_CREATE, ino, ino * 1000, KVFDP_NO_CLASS));
	CHECK(ft.live_count() == 3);
	CHECK(ft.live_evictions() == 1 + 10'000 - 1);
	CHECK(ft.find_live(7 << 20, 10'009) != nullptr);
	CHECK(ft.find_live(7 << 20, 2) == nullptr);
	CHECK(ft.dead().size() == 1);  // evicted records are not deaths
	ft.set_writer(7 << 20, 10'009, KVFDP_WRITER_IDENT | 5);
	CHECK(ft.find_live(7 << 20, 10'009)->writer == (KVFDP_WRITER_IDENT | 5));
}

TEST_CASE("bpf: file table builds records and per-class lifetime histograms from events")
{
	FileTable ft(2);
	ft.on_event(ev(KVFDP_EV_CREATE, 10, 1'000'000, KVFDP_CLASS_SHORT));  // rule class
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
	CHECK(LifetimeHistogram::bucket_of(1'000'000) == 9);  // 1000 us
	CHECK(LifetimeHistogram::bucket_of(~0ull) == LifetimeHistogram::kBuckets - 1);
	CHECK(LifetimeHistogram::bucket_floor_us(10) == 1024);
}

TEST_CASE("bpf: record rows convert 512-byte sectors to 4096-byte LBAs, rounding outward")
{
	std::FILE *f = std::tmpfile();
	REQUIRE(f != nullptr);
	CHECK(write_record_row(f, 5, 'W', 16, 16, 2) == 2);    // aligned: LBA 2, 2 blocks
	CHECK(write_record_row(f, 6, 'D', 12, 8, 0) == 2);     // straddles LBAs 1 and 2
	CHECK(write_record_row(f, 7, 'W', 8, 1, 5, 42) == 1);  // one sector, writer 42
	std::rewind(f);
	char buf[128] = {};
	std::string all;
	while (std::fgets(buf, sizeof(buf), f))
		all += buf;
	std::fclose(f);
	CHECK(all == "5,W,2,2,2,0\n6,D,1,2,0,0\n7,W,1,1,5,42\n");
	CHECK(std::string(kRecordHeader) == "t_us,op,slba,nlb,class,writer\n");
}

namespace {

namespace fs = std::filesystem;

// A fake sysfs tree under a temporary directory, laid out as the kernel does.
struct FakeSys {
	kvfdp::test::TempDir tmp;
	fs::path root{tmp.path};
	void file(const std::string &rel, const std::string &text)
	{
		fs::create_directories((root / rel).parent_path());
		std::ofstream(root / rel) << text << "\n";
	}
	void dir(const std::string &rel) { fs::create_directories(root / rel); }
	void link(const std::string &rel, const std::string &target)
	{
		fs::create_directories((root / rel).parent_path());
		fs::create_symlink(root / target, root / rel);
	}
	// A gendisk directory at rel; dev empty = hidden (no dev attribute since 5.15).
	void disk(const std::string &rel, const std::string &dev, const std::string &nsid,
		  int queues, int tags)
	{
		std::string name = rel.substr(rel.rfind('/') + 1);
		dir(rel + "/queue");
		file(rel + "/hidden", dev.empty() ? "1" : "0");
		if (!nsid.empty())
			file(rel + "/nsid", nsid);
		if (!dev.empty()) {
			file(rel + "/dev", dev);
			link("dev/block/" + dev, rel);
		}
		for (int q = 0; q < queues; q++)
			file(rel + "/mq/" + std::to_string(q) + "/nr_tags", std::to_string(tags));
		link("block/" + name, rel);
	}
};

}  // namespace

TEST_CASE("bpf: request disks of an NVMe multipath head are its hidden path disks (6.12 sysfs)")
{
	FakeSys s;
	// Head nvme0n1 (bio-based: no mq) under subsystem 0, which links controllers 0 and 1.
	// Each controller holds its namespace disks: nsid 1 paths and an nsid 2 disk.
	const std::string subsys = "devices/virtual/nvme-subsystem/nvme-subsys0";
	s.disk(subsys + "/nvme0n1", "259:1", "1", 0, 0);
	s.link(subsys + "/nvme0n1/device", subsys);
	for (int c = 0; c < 2; c++) {
		std::string ctrl = "devices/pci0000:00/0000:00:0" + std::to_string(3 + c) +
				   ".0/nvme/nvme" + std::to_string(c);
		s.file(ctrl + "/cntlid", std::to_string(c + 1));
		s.link(subsys + "/nvme" + std::to_string(c), ctrl);
		s.disk(ctrl + "/nvme0c" + std::to_string(c) + "n1", "", "1", 2, 1023);
		s.disk(ctrl + "/nvme0c" + std::to_string(c) + "n2", "", "2", 2, 1023);
	}
	// A plain blk-mq disk: its requests are its own.
	s.disk("devices/virtual/block/loop0", "7:0", "", 1, 128);

	std::vector<RequestDisk> d = request_disks(kernel_dev(259, 1), s.root.string());
	REQUIRE(d.size() == 3);
	CHECK(d[0].name == "nvme0n1");
	CHECK(d[0].via == "itself");
	CHECK(d[0].devt == kernel_dev(259, 1));
	std::vector<std::string> paths{d[1].name, d[2].name};
	std::sort(paths.begin(), paths.end());
	CHECK(paths == std::vector<std::string>{"nvme0c0n1", "nvme0c1n1"});
	for (int i = 1; i < 3; i++) {
		CHECK(d[i].hidden);
		CHECK(d[i].devt == 0);  // by name
		CHECK(d[i].via == "nvme-subsystem");
	}
	MqGeometry g = mq_geometry(d, s.root.string());
	CHECK(g.queues == 2);
	CHECK(g.depth == 1023);
	CHECK(describe(d).find("nvme0c0n1 (hidden, by name, nvme-subsystem)") != std::string::npos);

	std::vector<RequestDisk> loop = request_disks(kernel_dev(7, 0), s.root.string());
	REQUIRE(loop.size() == 1);
	CHECK(loop[0].name == "loop0");
	CHECK(mq_geometry(loop, s.root.string()).depth == 128);
	CHECK(request_disks(kernel_dev(8, 0), s.root.string()).empty());
}

TEST_CASE("bpf: request disks also come from a head's multipath/ links, with a dev_t when shown")
{
	FakeSys s;
	s.disk("devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1", "259:5", "1", 0, 0);
	s.disk("devices/pci0000:00/0000:00:05.0/nvme/nvme2/nvme1c2n1", "259:4", "1", 4, 64);
	s.link("devices/virtual/nvme-subsystem/nvme-subsys1/nvme1n1/multipath/nvme1c2n1",
	       "devices/pci0000:00/0000:00:05.0/nvme/nvme2/nvme1c2n1");
	std::vector<RequestDisk> d = request_disks(kernel_dev(259, 5), s.root.string());
	REQUIRE(d.size() == 2);
	CHECK(d[1].name == "nvme1c2n1");
	CHECK(d[1].devt == kernel_dev(259, 4));
	CHECK(d[1].via == "multipath");
	CHECK(mq_geometry(d, s.root.string()).queues == 4);
}

TEST_CASE("bpf: partition_devs lists a disk's partitions by their dev attribute, nothing else")
{
	FakeSys s;
	const std::string disk = "devices/virtual/block/ublkb0";
	s.disk(disk, "259:0", "", 1, 64);
	s.file(disk + "/ublkb0p1/partition", "1");
	s.file(disk + "/ublkb0p1/dev", "259:1");
	s.file(disk + "/ublkb0p2/partition", "2");
	s.file(disk + "/ublkb0p2/dev", "259:2");
	s.file(disk + "/ublkb0p3/partition", "3");  // no dev: skipped
	std::vector<uint32_t> parts = partition_devs(kernel_dev(259, 0), s.root.string());
	std::sort(parts.begin(), parts.end());
	CHECK(parts == std::vector<uint32_t>{kernel_dev(259, 1), kernel_dev(259, 2)});
	CHECK(partition_devs(kernel_dev(8, 0), s.root.string()).empty());
	s.disk("devices/virtual/block/loop0", "7:0", "", 1, 128);
	CHECK(partition_devs(kernel_dev(7, 0), s.root.string()).empty());
}
