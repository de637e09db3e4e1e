// The model backend: nvme::Device over model::Ftl, data in a sparse file, logs as a drive's.
#include "nvme/model/model_device.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "common/unique_fd.hpp"
#include "nvme/logs.hpp"
#include "nvme/model/ftl.hpp"
#include "nvme/spec.hpp"
#include "nvme/status.hpp"

namespace kvfdp::model {
namespace {

constexpr uint32_t kMaxTransfer = 512u << 10;  // like QEMU's default MDTS
constexpr int kDnr = 1 << 14;
constexpr int kStatusLbaOutOfRange = kDnr | nvme::kScLbaOutOfRange;
constexpr int kStatusCapacityExceeded = kDnr | 0x81;  // generic SC 0x81, NVM command set

// What the device and its queues share. mu serializes the FTL and the event log: the model
// is one controller, like a drive's.
struct State {
	std::mutex mu;
	std::unique_ptr<Ftl> ftl;
	UniqueFd fd;
	nvme::DeviceInfo info;
	// Host events (Invalid Placement Identifier), the newest kFdpEventsMax in a ring.
	nvme::FdpEvent events[nvme::kFdpEventsMax] = {};
	uint32_t nevents = 0;  // ever logged
};

uint16_t pid_of(const nvme::DeviceInfo &info, uint32_t h)
{
	const uint32_t rg = h / info.nruh, ruh = h % info.nruh;
	return static_cast<uint16_t>(info.rgif ? (rg << (16 - info.rgif)) | ruh : ruh);
}

// pwrite / pread the whole range; a read past the end of the file returns zeros.
int write_all(int fd, const uint8_t *p, size_t len, off_t off)
{
	while (len) {
		const ssize_t n = pwrite(fd, p, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= static_cast<size_t>(n);
		off += n;
	}
	return 0;
}

int read_all(int fd, uint8_t *p, size_t len, off_t off)
{
	while (len) {
		const ssize_t n = pread(fd, p, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			std::memset(p, 0, len);
			return 0;
		}
		p += n;
		len -= static_cast<size_t>(n);
		off += n;
	}
	return 0;
}

class ModelQueue final : public nvme::IoQueue {
public:
	explicit ModelQueue(std::shared_ptr<State> st) : st_(std::move(st)) {}

	nvme::Prep prep(io_uring &, const nvme::IoRequest &req) override
	{
		return nvme::Prep{false, run(req)};
	}

	// Nothing is ever queued on the ring.
	int complete(const io_uring_cqe &) override { return -EINVAL; }

private:
	int run(const nvme::IoRequest &req)
	{
		const nvme::DeviceInfo &info = st_->info;
		const int fd = st_->fd.get();
		if (req.op == nvme::IoOp::flush)
			return fdatasync(fd) == 0 ? 0 : -errno;
		if (req.nlb == 0 || req.slba >= info.nlb || req.nlb > info.nlb - req.slba)
			return kStatusLbaOutOfRange;
		const off_t off = static_cast<off_t>(req.slba * info.lba_size);
		const size_t len = size_t{req.nlb} * info.lba_size;
		switch (req.op) {
		case nvme::IoOp::read:
			if (!req.buf || len > info.max_transfer)
				return -EINVAL;
			return read_all(fd, static_cast<uint8_t *>(req.buf), len, off);
		case nvme::IoOp::write: {
			if (!req.buf || len > info.max_transfer)
				return -EINVAL;
			int r = write_all(fd, static_cast<const uint8_t *>(req.buf), len, off);
			if (r)
				return r;
			std::lock_guard<std::mutex> lock(st_->mu);
			uint32_t h = req.handle;
			if (h >= st_->ftl->handles()) {
				// Like a drive: the write lands on the default handle, with an event.
				log_invalid_pid(req.handle);
				h = 0;
			}
			r = st_->ftl->write(h, req.slba, req.nlb);
			return r == -ENOSPC ? kStatusCapacityExceeded : r;
		}
		case nvme::IoOp::deallocate:
		case nvme::IoOp::write_zeroes: {
			// A hole reads back as zeros; the model drops the mapping either way.
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
				      static_cast<off_t>(len)) != 0)
				return -errno;
			std::lock_guard<std::mutex> lock(st_->mu);
			return st_->ftl->deallocate(req.slba, req.nlb);
		}
		case nvme::IoOp::flush:
			break;
		}
		return -ENOTSUP;
	}

	// Caller holds mu.
	void log_invalid_pid(uint16_t handle)
	{
		nvme::FdpEvent &e = st_->events[st_->nevents % nvme::kFdpEventsMax];
		e = nvme::FdpEvent{};
		e.type = nvme::kFdpEventInvalidPid;
		e.flags = nvme::kFdpEventFlagPiv | nvme::kFdpEventFlagNsidv;
		e.pid = handle;
		e.nsid = st_->info.nsid;
		st_->nevents++;
	}

	std::shared_ptr<State> st_;
};

class ModelDevice final : public nvme::Device {
public:
	explicit ModelDevice(std::shared_ptr<State> st) : st_(std::move(st)) {}

	const nvme::DeviceInfo &info() const override { return st_->info; }

	Result<std::vector<nvme::Handle>> handles() override
	{
		std::lock_guard<std::mutex> lock(st_->mu);
		const Ftl &f = *st_->ftl;
		std::vector<nvme::Handle> hs(f.handles());
		for (uint32_t h = 0; h < f.handles(); h++) {
			hs[h].index = static_cast<uint16_t>(h);
			hs[h].pid = pid_of(st_->info, h);
			hs[h].ruhid = static_cast<uint16_t>(h % st_->info.nruh);
			hs[h].ruht = static_cast<uint8_t>(f.handle_type(h % st_->info.nruh));
			hs[h].ruamw = f.ruamw(h);
		}
		return hs;
	}

	Result<std::vector<uint8_t>> log_page(uint8_t lid, uint8_t lsp) override
	{
		std::lock_guard<std::mutex> lock(st_->mu);
		const Ftl &f = *st_->ftl;
		const ModelConfig &c = f.config();
		switch (lid) {
		case nvme::kLidFdpConfigs: {
			nvme::FdpConfigs cfgs;
			nvme::FdpConfig one;
			one.rgif = st_->info.rgif;
			one.vwc = false;
			one.valid = true;
			one.nrg = c.nrg;
			one.nruh = c.nruh;
			one.maxpids = static_cast<uint16_t>(f.handles() - 1);
			one.nnss = 1;
			one.runs = c.ru_size;
			one.erutl = 0;
			for (uint32_t r = 0; r < c.nruh; r++)
				one.ruht.push_back(static_cast<uint8_t>(f.handle_type(r)));
			cfgs.configs.push_back(std::move(one));
			return nvme::encode_fdp_configs(cfgs);
		}
		case nvme::kLidRuhUsage: {
			std::vector<uint8_t> ruha(c.nruh, nvme::kRuhaUnused);
			for (uint32_t h = 0; h < f.handles(); h++)
				if (f.handle_used(h))
					ruha[h % c.nruh] = nvme::kRuhaHostSpecified;
			return nvme::encode_ruh_usage(ruha);
		}
		case nvme::kLidFdpStats: {
			nvme::FdpStats s;
			s.hbmw = f.stats().host_bytes;
			s.mbmw = f.stats().media_bytes;
			s.mbe = f.stats().erased_bytes;
			return nvme::encode_fdp_stats(s);
		}
		case nvme::kLidFdpEvents: {
			std::vector<nvme::FdpEvent> ev;
			if (lsp & nvme::kLspFdpHostEvents) {
				const uint32_t n = std::min(st_->nevents, nvme::kFdpEventsMax);
				for (uint32_t i = st_->nevents - n; i < st_->nevents; i++)
					ev.push_back(st_->events[i % nvme::kFdpEventsMax]);
			}
			// The model raises no controller events (it never reallocates media).
			return nvme::encode_fdp_events(ev);
		}
		default:
			return make_error(std::errc::invalid_argument,
					  "model: log page " + std::to_string(lid) +
						  " is not an FDP log (0x20-0x23)");
		}
	}

	Result<std::unique_ptr<nvme::IoQueue>> open_queue(io_uring &) override
	{
		return std::unique_ptr<nvme::IoQueue>(new ModelQueue(st_));
	}

private:
	std::shared_ptr<State> st_;
};

} // namespace

Result<std::unique_ptr<nvme::Device>> open_model_device(const ModelDeviceOptions &opts)
{
	if (opts.data_path.empty())
		return guidance_error(std::errc::invalid_argument,
				      "model device: give a data file path (a sparse file is created)");
	auto ftl = Ftl::create(opts.config);
	if (!ftl) {
		Error e = std::move(ftl).error();
		e.context = "model device: " + e.context;
		return e;
	}
	auto fd = open_fd(opts.data_path, O_RDWR | O_CREAT, 0644);
	if (!fd)
		return fd.error();
	struct stat sb {};
	if (fstat(fd->get(), &sb) != 0)
		return errno_error(errno, "stat " + opts.data_path);
	if (!S_ISREG(sb.st_mode))
		return guidance_error(std::errc::invalid_argument,
				      "model device: " + opts.data_path + " is not a regular file");
	const uint64_t size = opts.config.logical_bytes;
	if (static_cast<uint64_t>(sb.st_size) < size && ftruncate(fd->get(), static_cast<off_t>(size)) != 0)
		return errno_error(errno, "grow " + opts.data_path + " to " + std::to_string(size) +
						  " bytes");

	auto st = std::make_shared<State>();
	st->ftl = std::move(*ftl);
	st->fd = std::move(*fd);
	nvme::DeviceInfo &info = st->info;
	const ModelConfig &c = opts.config;
	info.path = "model:" + opts.data_path;
	info.backend = "model";
	info.nsid = 1;
	info.lba_size = c.lba_size;
	info.nlb = st->ftl->logical_lbas();
	info.max_transfer = std::max(kMaxTransfer, c.lba_size);
	info.fdp_supported = true;
	info.fdp_enabled = true;
	info.volatile_cache = true;
	info.fua = false;
	info.endgid = 1;
	uint8_t rgif = 0;
	while ((1u << rgif) < c.nrg)
		rgif++;
	info.rgif = rgif;
	info.nrg = c.nrg;
	info.nruh = c.nruh;
	info.ru_size = c.ru_size;
	info.config_index = 0;
	return std::unique_ptr<nvme::Device>(new ModelDevice(std::move(st)));
}

} // namespace kvfdp::model
