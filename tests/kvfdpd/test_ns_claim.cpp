// Tests of the namespace claim's parts that need no NVMe device: the mount lookup, the
// other-opener scan and the one-kvfdpd lock (on a regular file standing in for /dev/ngXnY).
// The claim on a real namespace (second kvfdpd, mounted /dev/nvme0n1) is vm_daemon_claim.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "tests/support/temp_files.hpp"
#include "kvfdpd/daemon/ctl/ns_claim.hpp"

using namespace kvfdp::daemon;
using kvfdp::test::TempDir;

TEST_CASE("ns_claim: the mount points of a disk and its partitions come from mountinfo")
{
	const std::string mi = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
			       "40 1 259:0 / /mnt/kv rw,relatime - xfs /dev/nvme0n1 rw\n"
			       "41 1 259:1 /sub /srv/x rw - ext4 /dev/nvme0n1p1 rw\n"
			       "42 1 259:10 / /other rw - ext4 /dev/nvme1n1 rw";
	CHECK(mounts_of(mi, {"259:0", "259:1"}) == std::vector<std::string>{"/mnt/kv", "/srv/x"});
	CHECK(mounts_of(mi, {"259:2"}).empty());
	CHECK(mounts_of("", {"259:0"}).empty());
}

TEST_CASE("ns_claim: a node that is not an NVMe namespace has no block device")
{
	CHECK(namespace_block_path("/dev/ublkb0").empty());
	CHECK(namespace_block_path("/tmp/file").empty());
}

TEST_CASE("ns_claim: a second claim of one node is refused naming the holder")
{
	TempDir dir;
	const std::string node = dir.path + "/ng9n9";
	{
		const int fd = ::open(node.c_str(), O_CREAT | O_WRONLY, 0600);
		REQUIRE(fd >= 0);
		::close(fd);
	}
	auto first = claim_namespace(node, [](int) { return std::string("/dev/ublkb7"); });
	REQUIRE(first);
	// A child process holds the node open like another kvfdpd would (the lock is per open file).
	int ready[2];
	REQUIRE(::pipe(ready) == 0);
	const pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		const int fd = ::open(node.c_str(), O_RDONLY);
		char c = 1;
		(void)!::write(ready[1], &c, 1);
		::pause();
		_exit(fd >= 0 ? 0 : 1);
	}
	char c = 0;
	REQUIRE(::read(ready[0], &c, 1) == 1);
	auto second = claim_namespace(node, [](int) { return std::string("/dev/ublkb7"); });
	REQUIRE_FALSE(second);
	const std::string msg = second.error().message();
	CHECK(msg.find("in use by pid ") != std::string::npos);
	CHECK(msg.find('\n') == std::string::npos);
	CHECK(other_opener({node}).text().find("pid " + std::to_string(child) + " (") == 0);
	const Opener o = other_opener({"/nonexistent-kvfdp-node", node});
	CHECK(o.pid == child);
	CHECK(o.path ==
	      node);  // the path the other process has open, not the first one asked about
	::kill(child, SIGKILL);
	::waitpid(child, nullptr, 0);
	::close(ready[0]);
	::close(ready[1]);
	// The lock goes with its holder's open file: released, the next claim succeeds.
	{
		NsClaim held = std::move(*first);
	}
	CHECK(claim_namespace(node, [](int) { return std::string(); }));
	CHECK_FALSE(claim_namespace(dir.path + "/absent", [](int) { return std::string(); }));
}
