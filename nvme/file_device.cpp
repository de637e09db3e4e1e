// The file backend: nvme::Device over a regular file or block device, no placement.
#include <cerrno>
#include <fcntl.h>
#include <liburing.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/unique_fd.hpp"
#include "nvme/backends.hpp"
#include "nvme/inflight.hpp"

namespace kvfdp::nvme {
namespace {

class FileQueue final : public IoQueue {
public:
	FileQueue(int fd, const DeviceInfo &info, size_t depth)
		: fd_(fd), lba_size_(info.lba_size), nlb_(info.nlb),
		  max_nlb_(info.max_transfer / info.lba_size), expect_(depth)
	{
	}

	Prep prep(io_uring &ring, const IoRequest &req) override
	{
		if (req.op != IoOp::flush &&
		    (req.nlb == 0 || req.slba >= nlb_ || req.nlb > nlb_ - req.slba))
			return Prep{false, -EINVAL};
		bool data = req.op == IoOp::read || req.op == IoOp::write;
		if (data && (req.nlb > max_nlb_ || !req.buf))
			return Prep{false, -EINVAL};
		uint64_t off = req.slba * lba_size_;
		uint64_t len = uint64_t{req.nlb} * lba_size_;
		if (data && !expect_.insert(req.user_data, static_cast<uint32_t>(len)))
			return Prep{false, -EBUSY};
		io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		if (!sqe) {
			uint32_t dummy;
			if (data)
				expect_.take(req.user_data, dummy);
			return Prep{false, -EBUSY};
		}
		unsigned n = static_cast<unsigned>(len);
		switch (req.op) {
		case IoOp::read:
			if (req.buf_index >= 0)
				io_uring_prep_read_fixed(sqe, fd_, req.buf, n, off, req.buf_index);
			else
				io_uring_prep_read(sqe, fd_, req.buf, n, off);
			break;
		case IoOp::write:
			if (req.buf_index >= 0)
				io_uring_prep_write_fixed(sqe, fd_, req.buf, n, off, req.buf_index);
			else
				io_uring_prep_write(sqe, fd_, req.buf, n, off);
			break;
		case IoOp::flush:
			io_uring_prep_fsync(sqe, fd_, IORING_FSYNC_DATASYNC);
			break;
		case IoOp::deallocate:
			io_uring_prep_fallocate(sqe, fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
						static_cast<off_t>(off), static_cast<off_t>(len));
			break;
		case IoOp::write_zeroes:
			io_uring_prep_fallocate(sqe, fd_, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
						static_cast<off_t>(off), static_cast<off_t>(len));
			break;
		}
		sqe->user_data = req.user_data;
		return Prep{true, 0};
	}

	int complete(const io_uring_cqe &cqe) override
	{
		uint32_t want;
		if (!expect_.empty() && expect_.take(cqe.user_data, want)) {
			if (cqe.res < 0)
				return cqe.res;
			return static_cast<uint32_t>(cqe.res) == want ? 0 : -EIO;  // short transfer
		}
		return cqe.res < 0 ? cqe.res : 0;
	}

private:
	int fd_;
	uint32_t lba_size_;
	uint64_t nlb_;
	uint32_t max_nlb_;
	InflightMap<uint32_t> expect_;
};

class FileDevice final : public Device {
public:
	FileDevice(UniqueFd fd, DeviceInfo info) : fd_(std::move(fd)), info_(std::move(info)) {}

	const DeviceInfo &info() const override { return info_; }

	Result<std::vector<Handle>> handles() override
	{
		std::vector<Handle> hs(info_.nruh);
		for (uint16_t i = 0; i < info_.nruh; ++i) {
			hs[i].index = i;
			hs[i].pid = i;
			hs[i].ruhid = i;
			hs[i].ruht = 1;
		}
		return hs;
	}

	Result<std::vector<uint8_t>> log_page(uint8_t, uint8_t) override
	{
		return guidance_error(std::errc::not_supported,
				      "the file backend has no FDP log pages; use --backend model or a "
				      "passthru device");
	}

	Result<void> ruh_update(std::span<const uint16_t>) override
	{
		return guidance_error(std::errc::not_supported,
				      "the file backend has no reclaim units to update; use --backend "
				      "model or a passthru device");
	}

	Result<std::unique_ptr<IoQueue>> open_queue(io_uring &ring) override
	{
		size_t depth = ring.cq.ring_entries ? ring.cq.ring_entries : 128;
		return std::unique_ptr<IoQueue>(new FileQueue(fd_.get(), info_, depth));
	}

private:
	UniqueFd fd_;
	DeviceInfo info_;
};

} // namespace

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
								  std::to_string(opts.size_bytes) + " bytes");
			size = opts.size_bytes;
		}
	} else {
		return make_error(std::errc::invalid_argument,
				  path + " is neither a regular file nor a block device");
	}
	if (size < lba)
		return guidance_error(std::errc::invalid_argument,
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

} // namespace kvfdp::nvme
