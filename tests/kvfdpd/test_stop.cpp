// Tests of the SIGTERM choice (a held ublk disk is left for the next kvfdpd, a free one removed)
// and of the holder a refused `kvfdp stop` names.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <vector>
#include <unistd.h>

#include "tests/support/temp_files.hpp"
#include "kvfdpd/daemon/ctl/stop_choice.hpp"

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
		const int fd =
			::open((holders + "/" + n).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
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

TEST_CASE("daemon: a stop names what holds the disk: holders, then mounts, then another opener")
{
	TempDir d;
	DiskLookup l;
	l.holders_dir = d.path + "/holders";
	l.majmin = "259:7";
	l.mountinfo = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
		      "97 22 259:7 / /mnt/kv rw,relatime - xfs /dev/ublkb0 rw\n"
		      "98 22 259:7 / /srv/kv2 rw - xfs /dev/ublkb0 rw\n";
	l.paths = {d.path + "/ublkb0"};
	CHECK(disk_holder(l) == "mounted at /mnt/kv, /srv/kv2");
	REQUIRE(::mkdir(l.holders_dir.c_str(), 0755) == 0);
	const int fd =
		::open((l.holders_dir + "/dm-3").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	REQUIRE(fd >= 0);
	::close(fd);
	CHECK(disk_holder(l) == "held by dm-3");

	// Neither: nothing found. A mount of another disk does not count.
	DiskLookup free_disk = l;
	free_disk.holders_dir = d.path + "/none";
	free_disk.mountinfo = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
	CHECK(disk_holder(free_disk).empty());
}

TEST_CASE("daemon: a stop names another process that has the disk open, never kvfdpd itself")
{
	TempDir d;
	const std::string node = d.path + "/ublkb5";
	const int mine = ::open(node.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	REQUIRE(mine >= 0);
	DiskLookup l;
	l.holders_dir = d.path + "/holders";
	l.paths = {node};
	CHECK(disk_holder(l).empty());  // only this process has it open

	int ready[2], done[2];
	REQUIRE(::pipe(ready) == 0);
	REQUIRE(::pipe(done) == 0);
	const pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		const int fd = ::open(node.c_str(), O_RDONLY);
		char c = fd >= 0 ? 'y' : 'n';
		(void)!::write(ready[1], &c, 1);
		(void)!::read(done[0], &c, 1);  // holds it until the parent has looked
		_exit(0);
	}
	char c = 0;
	REQUIRE(::read(ready[0], &c, 1) == 1);
	REQUIRE(c == 'y');
	const std::string holder = disk_holder(l);
	(void)!::write(done[1], "x", 1);
	int status = 0;
	::waitpid(child, &status, 0);
	CHECK(holder.rfind("open by pid " + std::to_string(child) + " (", 0) == 0);
	for (int p : {ready[0], ready[1], done[0], done[1], mine})
		::close(p);
}

TEST_CASE("daemon: a refused stop is one line with the disk, its holder and the way out")
{
	const std::string line = stop_refusal("/dev/ublkb0", "mounted at /mnt/kv");
	CHECK(line ==
	      "not stopping: /dev/ublkb0 is mounted at /mnt/kv; unmount or close it first, or stop anyway "
	      "with `kvfdp stop --force`");
	CHECK(line.find('\n') == std::string::npos);
}
