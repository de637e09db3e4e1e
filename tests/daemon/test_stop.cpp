// Tests of the SIGTERM choice: a held ublk disk is left for the next kvfdpd, a free one removed.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <vector>
#include <unistd.h>

#include "tests/support/temp_files.hpp"
#include "userspace/daemon/stop_choice.hpp"

using namespace kvfdp::daemon;

using kvfdp::test::TempDir;

TEST_CASE("daemon: SIGTERM removes a free disk and leaves a held or unknown one")
{
	CHECK(should_remove(false, false, Held::no));
	CHECK_FALSE(should_remove(false, false, Held::yes));
	CHECK_FALSE(should_remove(false, false, Held::unknown));
	// --keep leaves it whatever its state; --force-remove removes it whatever its state.
	for (Held h : {Held::no, Held::yes, Held::unknown}) {
		CHECK_FALSE(should_remove(true, false, h));
		CHECK(should_remove(false, true, h));
	}
}

TEST_CASE("daemon: an exclusive open's errno says whether the disk is held")
{
	CHECK(held_from_open_errno(0) == Held::no);
	CHECK(held_from_open_errno(EBUSY) == Held::yes);
	CHECK(held_from_open_errno(ENOENT) == Held::unknown);
	CHECK(held_from_open_errno(EACCES) == Held::unknown);
}

TEST_CASE("daemon: sysfs holders make the disk held, named in the reason")
{
	TempDir d;
	const std::string holders = d.path + "/holders";
	CHECK(disk_holders(holders).empty());  // absent
	REQUIRE(::mkdir(holders.c_str(), 0755) == 0);
	CHECK(disk_holders(holders).empty());  // empty
	for (const char *n : {"md0", "dm-1"}) {
		const int fd = ::open((holders + "/" + n).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		REQUIRE(fd >= 0);
		::close(fd);
	}
	CHECK(disk_holders(holders) == std::vector<std::string>{"dm-1", "md0"});
	const DiskUse u = check_disk_use(d.path + "/no-such-disk", holders);
	CHECK(u.held == Held::yes);
	CHECK(u.why == "held by dm-1 md0");
	CHECK_FALSE(u.claim.valid());
}

TEST_CASE("daemon: a disk whose node cannot be opened is not removed")
{
	TempDir d;
	const DiskUse u = check_disk_use(d.path + "/ublkb9", d.path + "/holders");
	CHECK(u.held == Held::unknown);
	CHECK(u.why.find("No such file") != std::string::npos);
	CHECK_FALSE(u.claim.valid());
	CHECK_FALSE(should_remove(false, false, u.held));
}
