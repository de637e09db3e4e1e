// Scratch loop / named disks with a fresh filesystem for the tagger tests.
#include "tests/bpf/test_disk.hpp"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/skip.hpp"

namespace kvfdp::test {

int run_cmd(const std::string &cmd)
{
	int rc = std::system(cmd.c_str());
	if (rc == -1 || !WIFEXITED(rc))
		return -1;
	return WEXITSTATUS(rc);
}

namespace {

std::string read_cmd(const std::string &cmd)
{
	std::string out;
	if (std::FILE *p = ::popen(cmd.c_str(), "r")) {
		char buf[256];
		while (std::fgets(buf, sizeof(buf), p))
			out += buf;
		::pclose(p);
	}
	while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
		out.pop_back();
	return out;
}

} // namespace

ScratchFs::ScratchFs(const std::string &fstype, unsigned size_mib) : fstype_(fstype)
{
	require_root("creating loop devices and filesystems");
	std::string mkfs = fstype == "xfs" ? "mkfs.xfs" : "mkfs.ext4";
	if (run_cmd("command -v " + mkfs + " >/dev/null 2>&1") != 0) {
		why_ = mkfs + " is not installed";
		return;
	}
	if (const char *d = std::getenv("KVFDP_BPF_TEST_DISK"); d && *d) {
		disk_ = d;
	} else {
		if (run_cmd("command -v losetup >/dev/null 2>&1") != 0)
			skip("losetup is not installed (util-linux)");
		char tmpl[] = "/var/tmp/kvfdp-bpf-disk-XXXXXX";
		int fd = ::mkstemp(tmpl);
		if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(size_mib) << 20) != 0)
			skip("cannot create the loop backing file in /var/tmp");
		::close(fd);
		backing_ = tmpl;
		disk_ = read_cmd("losetup --find --show " + backing_ + " 2>/dev/null");
		if (disk_.rfind("/dev/loop", 0) != 0)
			skip("losetup could not attach a loop device (no loop driver?)");
		loop_ = true;
	}
	std::string cmd = fstype == "xfs"
		? "mkfs.xfs -q -f -K " + disk_
		: "mkfs.ext4 -q -F -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 " + disk_;
	if (run_cmd(cmd + " >/dev/null 2>&1") != 0) {
		why_ = cmd + " failed";
		return;
	}
	char mt[] = "/tmp/kvfdp-bpf-mnt-XXXXXX";
	if (!::mkdtemp(mt)) {
		why_ = "mkdtemp failed";
		return;
	}
	mnt_ = mt;
	if (::mount(disk_.c_str(), mnt_.c_str(), fstype.c_str(), 0, nullptr) != 0) {
		why_ = "mount " + disk_ + " (" + fstype + ") failed";
		return;
	}
	mounted_ = true;
	ok_ = true;
}

ScratchFs::~ScratchFs()
{
	if (mounted_)
		::umount2(mnt_.c_str(), 0);
	if (!mnt_.empty())
		::rmdir(mnt_.c_str());
	if (loop_)
		run_cmd("losetup -d " + disk_ + " >/dev/null 2>&1");
	if (!backing_.empty())
		::unlink(backing_.c_str());
}

} // namespace kvfdp::test
