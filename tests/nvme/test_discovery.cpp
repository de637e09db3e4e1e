// Discovery's host-testable parts: device-name parsing and its one-line errors, the sysfs
// walk to the controller (on a fake sysfs tree), and the handle join.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "nvme/discovery.hpp"

using namespace kvfdp::nvme;
namespace fs = std::filesystem;

TEST_CASE("nvme: ng paths give the block and generic names")
{
	auto n = parse_ng_path("/dev/ng0n1");
	REQUIRE(n.ok());
	CHECK(n->ng_name == "ng0n1");
	CHECK(n->block_name == "nvme0n1");
	auto m = parse_ng_path("/dev/ng12n3");
	REQUIRE(m.ok());
	CHECK(m->block_name == "nvme12n3");
}

TEST_CASE("nvme: a block device or controller path says which ng device to use")
{
	auto b = parse_ng_path("/dev/nvme0n1");
	REQUIRE(!b.ok());
	CHECK(b.error().message().find("use /dev/ng0n1") != std::string::npos);
	auto p = parse_ng_path("/dev/nvme2n3p1");
	REQUIRE(!p.ok());
	CHECK(p.error().message().find("use /dev/ng2n3") != std::string::npos);
	auto c = parse_ng_path("/dev/nvme1");
	REQUIRE(!c.ok());
	CHECK(c.error().message().find("controller") != std::string::npos);
	CHECK(c.error().message().find("/dev/ng1n1") != std::string::npos);
	auto x = parse_ng_path("/dev/sda");
	REQUIRE(!x.ok());
	CHECK(x.error().message().find("/dev/ngXnY") != std::string::npos);
	CHECK(!parse_ng_path("/dev/ng0").ok());
	CHECK(!parse_ng_path("/dev/ng0n1x").ok());
	for (const char *bad : {"/dev/nvme0n1", "/dev/nvme1", "/dev/sda", "/dev/ng0"})
		CHECK(parse_ng_path(bad).error().message().find('\n') == std::string::npos);
}

TEST_CASE("nvme: discovery of a missing or non-char device fails in one line")
{
	auto r = discover("/dev/ng999n1");
	REQUIRE(!r.ok());
	CHECK(r.error().message().find("/dev/ng999n1") != std::string::npos);
	auto b = discover("/dev/nvme0n1");
	REQUIRE(!b.ok());
	CHECK(b.error().message().find("use /dev/ng0n1") != std::string::npos);
}

namespace {
struct FakeSysfs {
	fs::path root;
	FakeSysfs()
	{
		root = fs::temp_directory_path() / ("kvfdp-sysfs-" + std::to_string(getpid()));
		fs::remove_all(root);
		fs::create_directories(root / "class/nvme-generic");
		// Plain controller: ng0n1 -> devices/pci/nvme/nvme0
		fs::create_directories(root / "devices/pci0/nvme/nvme0");
		fs::create_directories(root / "class/nvme-generic/ng0n1");
		fs::create_directory_symlink(root / "devices/pci0/nvme/nvme0",
					     root / "class/nvme-generic/ng0n1/device");
		// Multipath head: ng1n1 -> virtual/nvme-subsys/nvme-subsys1 with nvme3, nvme2
		fs::path sub = root / "devices/virtual/nvme-subsystem/nvme-subsys1";
		fs::create_directories(sub / "nvme3");
		fs::create_directories(sub / "nvme2");
		fs::create_directories(sub / "nvme1n1");
		fs::create_directories(root / "class/nvme-generic/ng1n1");
		fs::create_directory_symlink(sub, root / "class/nvme-generic/ng1n1/device");
		// Broken: points at something else.
		fs::create_directories(root / "devices/other/sda");
		fs::create_directories(root / "class/nvme-generic/ng2n1");
		fs::create_directory_symlink(root / "devices/other/sda",
					     root / "class/nvme-generic/ng2n1/device");
	}
	~FakeSysfs() { fs::remove_all(root); }
};
}  // namespace

TEST_CASE("nvme: the controller is found through sysfs, with or without multipath")
{
	FakeSysfs s;
	auto a = find_controller("ng0n1", s.root.string());
	REQUIRE(a.ok());
	CHECK(*a == "nvme0");
	auto b = find_controller("ng1n1", s.root.string());
	REQUIRE(b.ok());
	CHECK(*b == "nvme2");
	auto c = find_controller("ng2n1", s.root.string());
	CHECK(!c.ok());
	auto d = find_controller("ng9n9", s.root.string());
	REQUIRE(!d.ok());
	CHECK(d.error().message().find("ng9n9") != std::string::npos);
}

TEST_CASE("nvme: handles join RUH Status order with the configuration's handle types")
{
	RuhStatus rs;
	RuhStatusDesc d0{}, d1{};
	d0.pid = 0x0000;
	d0.ruhid = 0;
	d0.ruamw = 100;
	d1.pid = 0x0007;
	d1.ruhid = 7;
	d1.earutr = 9;
	d1.ruamw = 50;
	rs.descs = {d1, d0};  // device order is kept, whatever the PIDs are
	FdpConfig cfg;
	cfg.ruht = {1, 1, 1, 1, 1, 1, 1, 2};
	auto hs = make_handles(rs, cfg);
	REQUIRE(hs.size() == 2);
	CHECK(hs[0].index == 0);
	CHECK(hs[0].pid == 7);
	CHECK(hs[0].ruht == 2);
	CHECK(hs[0].earutr == 9u);
	CHECK(hs[0].ruamw == 50u);
	CHECK(hs[1].index == 1);
	CHECK(hs[1].pid == 0);
	CHECK(hs[1].ruht == 1);
}

TEST_CASE("nvme: FDP readiness errors say what to do, one line each")
{
	kvfdp::nvme::DeviceInfo info;
	info.path = "/dev/ng0n1";
	info.endgid = 2;
	auto none = fdp_usable(info, 8, "/dev/nvme0");
	REQUIRE(!none.ok());
	CHECK(none.error().message().find("CTRATT bit 19 clear: this drive has no FDP; use "
					  "--backend model to project WAF") != std::string::npos);
	CHECK(none.error().code == std::errc::not_supported);

	info.fdp_supported = true;
	auto off = fdp_usable(info, 8, "/dev/nvme0");
	REQUIRE(!off.ok());
	CHECK(off.error().message().find("FDP is disabled on endurance group 2") !=
	      std::string::npos);
	CHECK(off.error().message().find("nvme set-feature /dev/nvme0 -f 0x1d -v 2 --cdw12=1") !=
	      std::string::npos);

	info.fdp_enabled = true;
	auto empty = fdp_usable(info, 0, "/dev/nvme0");
	REQUIRE(!empty.ok());
	CHECK(empty.error().message().find("/dev/ng0n1 has no placement handles") !=
	      std::string::npos);

	CHECK(fdp_usable(info, 1, "/dev/nvme0").ok());
	for (const auto *r : {&none, &off, &empty})
		CHECK(r->error().message().find('\n') == std::string::npos);
}

TEST_CASE("nvme: the passthrough transfer limit leaves room for an unaligned, scattered buffer")
{
	// QEMU's controller under Linux 6.12: MDTS 7 (512 KiB), max_hw_sectors_kb 512,
	// max_segments 128. 512 KiB from a mid-page start spans 129 pages: one page less.
	TransferLimits q612{512 * 1024, 512 * 1024, 128, 0xffffffffull, 4096};
	CHECK(passthru_max_transfer(q612, 4096) == 127u * 4096);
	CHECK(passthru_max_transfer(q612, 512) == 127u * 4096);
	// Linux 6.1 gives the same controller 127 segments.
	TransferLimits q61{512 * 1024, 512 * 1024, 127, 0xffffffffull, 4096};
	CHECK(passthru_max_transfer(q61, 4096) == 126u * 4096);
	// the smallest limit wins, whichever it is
	CHECK(passthru_max_transfer({128 * 1024, 512 * 1024, 128, 0, 4096}, 4096) == 128u * 1024);
	CHECK(passthru_max_transfer({0, 64 * 1024, 128, 0, 4096}, 4096) == 64u * 1024);
	CHECK(passthru_max_transfer({0, 0, 33, 0, 4096}, 4096) == 32u * 4096);
	// segments smaller than a page: each page costs several
	CHECK(passthru_max_transfer({0, 0, 64, 1024, 4096}, 512) == 15u * 4096);
	// whole blocks only, at least one block, at most 65536 blocks
	CHECK(passthru_max_transfer({0, 10000, 0, 0, 4096}, 4096) == 8192u);
	CHECK(passthru_max_transfer({0, 100, 0, 0, 4096}, 4096) == 4096u);
	CHECK(passthru_max_transfer({0, 1ull << 30, 0, 0, 4096}, 512) == 65536u * 512);
	// nothing known: 128 KiB
	CHECK(passthru_max_transfer({}, 4096) == 128u * 1024);
	CHECK(passthru_max_transfer({}, 0) == 0u);
}

TEST_CASE("nvme: queue limits are read from sysfs, missing files stay 0")
{
	fs::path root = fs::temp_directory_path() / ("kvfdp-queue-" + std::to_string(getpid()));
	fs::remove_all(root);
	fs::create_directories(root / "block/nvme0n1/queue");
	auto put = [&](const char *name, const char *v) {
		std::ofstream(root / "block/nvme0n1/queue" / name) << v << "\n";
	};
	put("max_hw_sectors_kb", "512");
	put("max_segments", "128");
	put("max_segment_size", "4294967295");
	TransferLimits lim;
	read_queue_limits("nvme0n1", lim, root.string());
	CHECK(lim.max_hw_bytes == 512u * 1024);
	CHECK(lim.max_segments == 128u);
	CHECK(lim.max_segment_size == 4294967295ull);
	TransferLimits none;
	read_queue_limits("nvme9n9", none, root.string());
	CHECK(none.max_hw_bytes == 0u);
	CHECK(none.max_segments == 0u);
	fs::remove_all(root);
}
