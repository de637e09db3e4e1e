// Scratch loop / named disks with a fresh filesystem for the tagger tests.
#include "tests/bpf/test_disk.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
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

// The command's output (trailing newlines dropped); its exit status into *rc (-1: not run).
std::string read_cmd(const std::string &cmd, int *rc = nullptr)
{
	std::string out;
	int status = -1;
	if (std::FILE *p = ::popen(cmd.c_str(), "r")) {
		char buf[256];
		while (std::fgets(buf, sizeof(buf), p))
			out += buf;
		status = ::pclose(p);
	}
	if (rc)
		*rc = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
		out.pop_back();
	return out;
}

}  // namespace

ScratchFs::ScratchFs(const std::string &fstype, unsigned size_mib) : fstype_(fstype)
{
	// Root and the loop driver are capabilities (Requires(..., probe_scratch_disk())); past
	// them, anything that goes wrong here is a failure the test reports with why().
	require_root("creating loop devices and filesystems");
	if (const char *d = std::getenv("KVFDP_BPF_TEST_DISK"); d && *d) {
		disk_ = d;
	} else {
		backing_.emplace("/var/tmp", TempFile::MayFail{});
		if (!backing_->ok() ||
		    ::truncate(backing_->path.c_str(), static_cast<off_t>(size_mib) << 20) != 0) {
			why_ = std::string("cannot create the loop backing file in /var/tmp: ") +
			       std::strerror(errno);
			return;
		}
		const std::string &backing = backing_->path;
		disk_ = read_cmd("losetup --find --show " + backing + " 2>&1");
		if (disk_.rfind("/dev/loop", 0) != 0) {
			why_ = "losetup --find --show " + backing + " failed: " + disk_;
			disk_.clear();
			return;
		}
		loop_ = true;
	}
	std::string cmd =
		fstype == "xfs"
			? "mkfs.xfs -q -f -K " + disk_
			: "mkfs.ext4 -q -F -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 " +
				  disk_;
	int rc = 0;
	std::string out = read_cmd(cmd + " 2>&1", &rc);
	if (rc != 0) {
		why_ = cmd + " failed (exit " + std::to_string(rc) + "): " + out;
		return;
	}
	mnt_dir_.emplace("/tmp", TempDir::MayFail{});
	if (!mnt_dir_->ok()) {
		why_ = std::string("mkdtemp failed: ") + std::strerror(errno);
		return;
	}
	const std::string &mnt = mnt_dir_->path;
	if (::mount(disk_.c_str(), mnt.c_str(), fstype.c_str(), 0, nullptr) != 0) {
		why_ = "mount " + disk_ + " on " + mnt + " (" + fstype +
		       ") failed: " + std::strerror(errno);
		return;
	}
	mounted_ = true;
	ok_ = true;
}

// The mount point and the backing file go after this body (members): the directory only
// once unmounted, the file after losetup -d.
ScratchFs::~ScratchFs()
{
	// EINVAL: not mounted (the test unmounted it); any other failure leaves it mounted, and
	// then the directory is kept: never rm -rf what a mount holds.
	if (mounted_ && ::umount2(mnt_dir_->path.c_str(), 0) != 0 && errno != EINVAL)
		mnt_dir_->path.clear();
	if (loop_)
		run_cmd("losetup -d " + disk_ + " >/dev/null 2>&1");
}

const std::string &ScratchFs::mnt() const
{
	static const std::string none;
	return mnt_dir_ ? mnt_dir_->path : none;
}

std::function<std::string()> probe_scratch_disk()
{
	return [] {
		if (const char *d = std::getenv("KVFDP_BPF_TEST_DISK"); d && *d)
			return std::string();
		if (std::string why = probe_root("creating loop devices and filesystems")();
		    !why.empty())
			return why;
		return probe_loop()();
	};
}

}  // namespace kvfdp::test
