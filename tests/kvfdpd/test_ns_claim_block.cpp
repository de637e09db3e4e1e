// The namespace claim on a real block device (a loop device with ext4 standing in for the
// streams backend's /dev/nvmeXnY; needs root and the loop driver): a mounted device is refused
// naming its mount point, by its path and through a link to it; unmounted it is claimed, and
// a second claim while another process holds it is refused naming that process. The claim on
// QEMU's NVMe namespaces (both backends, a second kvfdpd) is in vm_daemon_claim and
// vm_daemon_streams.
#include <doctest/doctest.h>

#include <string>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/bpf/test_disk.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_files.hpp"
#include "kvfdpd/daemon/ctl/ns_claim.hpp"

using namespace kvfdp::daemon;
using namespace kvfdp::test;

namespace {

const Requires need_disk("loop", probe_scratch_disk());

std::string no_disk(int)
{
	return "";
}

}  // namespace

TEST_CASE(
	"ns_claim: a block device is claimed exclusively; mounted or held elsewhere it is refused in one line")
{
	ScratchFs fs("ext4", 64);
	REQUIRE_MESSAGE(fs.ok(), fs.why());
	TempDir dir;
	const std::string link = dir.path + "/by-id-nvme-kvfdp";
	REQUIRE(::symlink(fs.disk().c_str(), link.c_str()) == 0);

	CHECK(namespace_block_path(fs.disk()) == fs.disk());
	CHECK(namespace_block_path(link) == fs.disk());

	// Mounted: refused, naming the mount point, by its own path and by the link.
	for (const std::string &path : {fs.disk(), link}) {
		auto c = claim_namespace(path, no_disk);
		REQUIRE_FALSE(c);
		const std::string msg = c.error().message();
		INFO(msg);
		CHECK(msg.find(fs.disk() + " is mounted at " + fs.mnt()) != std::string::npos);
		CHECK(msg.find("unmount it first") != std::string::npos);
		CHECK(msg.find('\n') == std::string::npos);
	}

	REQUIRE(::umount2(fs.mnt().c_str(), 0) == 0);
	{
		auto c = claim_namespace(fs.disk(), no_disk);
		REQUIRE_MESSAGE(c, (c ? "" : c.error().message()));
		CHECK(c->block_path == fs.disk());
		CHECK(c->block);
		// Claimed, nothing can mount it.
		CHECK(::mount(fs.disk().c_str(), fs.mnt().c_str(), "ext4", 0, nullptr) != 0);
	}

	// Another process holds the claim (as a second kvfdpd would): refused, naming it.
	int ready[2];
	REQUIRE(::pipe(ready) == 0);
	const pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		auto c = claim_namespace(fs.disk(), no_disk);
		char ok = c ? 1 : 0;
		(void)!::write(ready[1], &ok, 1);
		::pause();
		_exit(0);
	}
	char ok = 0;
	REQUIRE(::read(ready[0], &ok, 1) == 1);
	REQUIRE(ok == 1);
	for (const std::string &path : {fs.disk(), link}) {
		auto c = claim_namespace(path, no_disk);
		REQUIRE_FALSE(c);
		const std::string msg = c.error().message();
		INFO(msg);
		CHECK(msg.find("in use by pid " + std::to_string(child) + " (") !=
		      std::string::npos);
		CHECK(msg.find('\n') == std::string::npos);
	}
	::kill(child, SIGKILL);
	::waitpid(child, nullptr, 0);
	::close(ready[0]);
	::close(ready[1]);
	// Its claim went with it.
	CHECK(claim_namespace(link, no_disk));
}
