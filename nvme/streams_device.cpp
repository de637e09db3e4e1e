// The streams backend: nvme::Device over an NVMe namespace's block device (/dev/nvmeXnY),
// placed through the block layer's write streams (Linux 6.16+) instead of passthrough.
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/unique_fd.hpp"
#include "nvme/backends.hpp"
#include "nvme/commands.hpp"
#include "nvme/discovery.hpp"
#include "nvme/rw_queue.hpp"
#include "nvme/status.hpp"
#include "nvme/streams.hpp"

namespace kvfdp::nvme {

namespace {

bool read_u64(const std::string &path, uint64_t &out)
{
	std::ifstream f(path);
	if (!f)
		return false;
	unsigned long long v = 0;
	if (!(f >> v))
		return false;
	out = v;
	return true;
}

const char *const kUsePassthru = "use --backend passthru --device /dev/ngXnY";

}  // namespace

Result<WriteStreams> read_write_streams(const std::string &block_name,
					const std::string &sysfs_root)
{
	const std::string q = sysfs_root + "/block/" + block_name + "/queue/";
	uint64_t n = 0;
	if (!read_u64(q + "max_write_streams", n))
		return guidance_error(
			std::errc::not_supported,
			"/dev/" + block_name + ": this kernel has no block write streams (" + q +
				"max_write_streams is missing or unreadable; Linux 6.16+): " +
				kUsePassthru);
	if (n == 0)
		return guidance_error(
			std::errc::not_supported,
			"/dev/" + block_name +
				" has no write streams (max_write_streams is 0: no FDP, "
				"FDP off, or a configuration the kernel does not map): " +
				kUsePassthru);
	WriteStreams ws;
	ws.max_streams = static_cast<uint16_t>(n > 255 ? 255 : n);  // the SQE field is a u8
	read_u64(q + "write_stream_granularity", ws.granularity);
	return ws;
}

namespace {

class StreamsDevice final : public Device {
public:
	StreamsDevice(UniqueFd fd, DeviceInfo info) : fd_(std::move(fd)), info_(std::move(info)) {}

	const DeviceInfo &info() const override { return info_; }

	// RUH Status through NVME_IOCTL_IO_CMD on the block device (root), cut to the streams
	// the kernel maps; where the ioctl is refused, the handles by stream number alone.
	Result<std::vector<Handle>> handles() override
	{
		std::vector<Handle> hs = numbered_handles(info_.nruh);
		auto rs = read_ruh_status(fd_.get(), info_.nsid);
		if (!rs)
			return hs;
		for (size_t i = 0; i < hs.size() && i < rs->descs.size(); ++i) {
			hs[i].pid = rs->descs[i].pid;
			hs[i].ruhid = rs->descs[i].ruhid;
			hs[i].earutr = rs->descs[i].earutr;
			hs[i].ruamw = rs->descs[i].ruamw;
		}
		return hs;
	}

	Result<std::vector<uint8_t>> log_page(uint8_t lid, uint8_t lsp) override
	{
		// NVME_IOCTL_ADMIN_CMD works on the namespace's block device too (root).
		return read_fdp_log(fd_.get(), lid, info_.endgid ? info_.endgid : 1, lsp);
	}

	Result<void> ruh_update(std::span<const uint16_t>) override
	{
		return guidance_error(
			std::errc::not_supported,
			"the streams backend cannot send RUH Update (the block layer has no such "
			"operation); use --backend passthru for it");
	}

	Result<std::unique_ptr<IoQueue>> open_queue(io_uring &ring) override
	{
		RwQueueSpec rs = rw_queue_spec(fd_.get(), info_, ring);
		rs.streams = info_.nruh;
		rs.discard = DiscardOp::block_discard;
		return make_rw_queue(rs);
	}

private:
	UniqueFd fd_;
	DeviceInfo info_;
};

}  // namespace

Result<std::unique_ptr<Device>> open_streams_device(const std::string &path,
						    const std::string &sysfs_root)
{
	struct stat st {};
	if (::stat(path.c_str(), &st) != 0)
		return errno_error(errno, "--backend streams: " + path);
	if (!S_ISBLK(st.st_mode))
		return guidance_error(
			std::errc::invalid_argument,
			path + " is not a block device: --backend streams takes the namespace's block "
			       "device (/dev/nvmeXnY); a /dev/ngXnY goes with --backend passthru");
	char real[PATH_MAX];
	if (!::realpath(path.c_str(), real))
		return errno_error(errno, "resolve " + path);
	const std::string rp = real;
	const std::string name = rp.substr(rp.rfind('/') + 1);
	auto ws = read_write_streams(name, sysfs_root);
	if (!ws)
		return ws.error();
	auto fd = open_fd(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (!fd)
		return fd.error();
	DeviceInfo info;
	info.path = path;
	info.backend = "streams";
	int lba = 0;
	uint64_t bytes = 0;
	if (ioctl(fd->get(), BLKSSZGET, &lba) != 0 || lba <= 0)
		return errno_error(errno, "BLKSSZGET " + path);
	if (ioctl(fd->get(), BLKGETSIZE64, &bytes) != 0)
		return errno_error(errno, "BLKGETSIZE64 " + path);
	const int nsid = ioctl(fd->get(), NVME_IOCTL_ID);
	info.nsid = nsid > 0 ? static_cast<uint32_t>(nsid) : 1;
	info.lba_size = static_cast<uint32_t>(lba);
	info.nlb = bytes / info.lba_size;
	// The block layer splits larger I/O itself (each piece keeps its stream).
	info.max_transfer = (1u << 20) / info.lba_size * info.lba_size;
	std::ifstream wc(sysfs_root + "/block/" + name + "/queue/write_cache");
	std::string mode;
	std::getline(wc, mode);
	info.volatile_cache = mode.rfind("write back", 0) == 0;
	info.fdp_supported = true;  // the driver maps streams only onto enabled FDP
	info.fdp_enabled = true;
	info.nrg = 1;  // and only with one reclaim group
	info.nruh = ws->max_streams;
	info.ru_size = ws->granularity;
	TransferLimits lim;
	read_queue_limits(name, lim, sysfs_root);
	info.max_segments = lim.max_segments;
	return std::unique_ptr<Device>(new StreamsDevice(std::move(*fd), std::move(info)));
}

}  // namespace kvfdp::nvme
