// A scratch disk for tagger tests: a file-backed loop device, or the device named by
// KVFDP_BPF_TEST_DISK (the VM scenario passes /dev/nvme0n1), with a fresh filesystem.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "tests/support/temp_files.hpp"

namespace kvfdp::test {

class ScratchFs {
public:
	// Creates the disk (loop unless KVFDP_BPF_TEST_DISK is set), runs mkfs for fstype
	// ("ext4" or "xfs") and mounts it. Skips (77, "root") without root; any other problem
	// (losetup, mkfs, mount) sets ok() false with why() holding the command's output: the
	// test must fail on it (REQUIRE_MESSAGE(fs.ok(), fs.why())), never pass or skip.
	explicit ScratchFs(const std::string &fstype, unsigned size_mib = 320);
	~ScratchFs();
	ScratchFs(const ScratchFs &) = delete;
	ScratchFs &operator=(const ScratchFs &) = delete;

	[[nodiscard]] bool ok() const { return ok_; }
	[[nodiscard]] const std::string &why() const { return why_; }
	[[nodiscard]] const std::string &disk() const { return disk_; }
	[[nodiscard]] const std::string &mnt() const;

private:
	std::string fstype_, disk_, why_;
	std::optional<TempFile> backing_;  // the loop device's file (none with KVFDP_BPF_TEST_DISK)
	std::optional<TempDir>
		mnt_dir_;  // emptied before it goes: its path cleared if umount failed
	bool loop_ = false, mounted_ = false, ok_ = false;
};

// The up-front capability probe of a test that makes a ScratchFs (tests/support/skip.hpp):
// root and the loop driver, or nothing when KVFDP_BPF_TEST_DISK names a disk.
std::function<std::string()> probe_scratch_disk();

// Runs a shell command; returns its exit status (-1 when it could not run).
int run_cmd(const std::string &cmd);

}  // namespace kvfdp::test
