// A scratch disk for tagger tests: a file-backed loop device, or the device named by
// KVFDP_BPF_TEST_DISK (the VM scenario passes /dev/nvme0n1), with a fresh filesystem.
#pragma once

#include <string>

namespace kvfdp::test {

class ScratchFs {
public:
	// Creates the disk (loop unless KVFDP_BPF_TEST_DISK is set), runs mkfs for fstype
	// ("ext4" or "xfs") and mounts it. Skips (77) when root, losetup or mkfs is missing;
	// sets ok() false with why() when only this filesystem cannot be made.
	explicit ScratchFs(const std::string &fstype, unsigned size_mib = 320);
	~ScratchFs();
	ScratchFs(const ScratchFs &) = delete;
	ScratchFs &operator=(const ScratchFs &) = delete;

	[[nodiscard]] bool ok() const { return ok_; }
	[[nodiscard]] const std::string &why() const { return why_; }
	[[nodiscard]] const std::string &disk() const { return disk_; }
	[[nodiscard]] const std::string &mnt() const { return mnt_; }

private:
	std::string fstype_, disk_, backing_, mnt_, why_;
	bool loop_ = false, mounted_ = false, ok_ = false;
};

// Runs a shell command; returns its exit status (-1 when it could not run).
int run_cmd(const std::string &cmd);

} // namespace kvfdp::test
