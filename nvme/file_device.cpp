// The file backend: nvme::Device over a regular file or block device, no placement.
#include <cerrno>
#include <fcntl.h>
#include <liburing.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/unique_fd.hpp"
#include "nvme/backends.hpp"
#include "nvme/rw_queue.hpp"

namespace kvfdp::nvme {
namespace {

class FileDevice final : public Device {
public:
	FileDevice(UniqueFd fd, DeviceInfo info) : fd_(std::move(fd)), info_(std::move(info)) {}

	const DeviceInfo &info() const override { return info_; }

	Result<std::vector<Handle>> handles() override { return numbered_handles(info_.nruh, 1); }

	Result<std::vector<uint8_t>> log_page(uint8_t, uint8_t) override
	{
		return guidance_error(
			std::errc::not_supported,
			"the file backend has no FDP log pages; use --backend model or a "
			"passthru device");
	}

	Result<void> ruh_update(std::span<const uint16_t>) override
	{
		return guidance_error(
			std::errc::not_supported,
			"the file backend has no reclaim units to update; use --backend "
			"model or a passthru device");
	}

	Result<std::unique_ptr<IoQueue>> open_queue(io_uring &ring) override
	{
		return make_rw_queue(rw_queue_spec(fd_.get(), info_, ring));
	}

private:
	UniqueFd fd_;
	DeviceInfo info_;
};

}  // namespace

Result<std::unique_ptr<Device>> open_file_device(const std::string &path,
						 const FileDeviceOptions &opts)
{
	uint32_t lba = opts.lba_size;
	if (lba < 512 || (lba & (lba - 1)) != 0)
		return make_error(std::errc::invalid_argument,
				  "file backend: LBA size " + std::to_string(lba) +
					  " must be a power of two >= 512");
	if (opts.max_transfer < lba)
		return make_error(std::errc::invalid_argument,
				  "file backend: max transfer must hold at least one LBA");
	auto fd = open_fd(path, O_RDWR | O_CREAT, 0644);
	if (!fd)
		return fd.error();
	struct stat st {};
	if (fstat(fd->get(), &st) != 0)
		return errno_error(errno, "stat " + path);
	uint64_t size = 0;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd->get(), BLKGETSIZE64, &size) != 0)
			return errno_error(errno, "BLKGETSIZE64 " + path);
	} else if (S_ISREG(st.st_mode)) {
		size = static_cast<uint64_t>(st.st_size);
		if (opts.size_bytes > size) {
			if (ftruncate(fd->get(), static_cast<off_t>(opts.size_bytes)) != 0)
				return errno_error(errno, "grow " + path + " to " +
								  std::to_string(opts.size_bytes) +
								  " bytes");
			size = opts.size_bytes;
		}
	} else {
		return make_error(std::errc::invalid_argument,
				  path + " is neither a regular file nor a block device");
	}
	if (size < lba)
		return guidance_error(
			std::errc::invalid_argument,
			path + " is empty; give a size (FileDeviceOptions::size_bytes)");
	DeviceInfo info;
	info.path = path;
	info.backend = "file";
	info.nsid = 1;
	info.lba_size = lba;
	info.nlb = size / lba;
	info.max_transfer = opts.max_transfer / lba * lba;
	info.volatile_cache = true;
	info.nruh = opts.nruh;
	info.nrg = 1;
	return std::unique_ptr<Device>(new FileDevice(std::move(*fd), std::move(info)));
}

}  // namespace kvfdp::nvme
