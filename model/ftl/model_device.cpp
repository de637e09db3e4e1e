// The model backend: nvme::Device over model::Ftl, data in a sparse file, logs as a drive's.
#include "model/ftl/model_device.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/unique_fd.hpp"
#include "nvme/logs.hpp"
#include "model/ftl/ftl.hpp"
#include "nvme/spec.hpp"
#include "nvme/status.hpp"

namespace kvfdp::model {
namespace {

constexpr uint32_t kMaxTransfer = 512u << 10;  // like QEMU's default MDTS
constexpr int kDnr = 1 << 14;
constexpr int kStatusLbaOutOfRange = kDnr | nvme::kScLbaOutOfRange;
constexpr int kStatusCapacityExceeded = kDnr | 0x81;  // generic SC 0x81, NVM command set

constexpr uint64_t kUsedBit = uint64_t{1} << 63;

// What the admin side (handles(), log_page(), on any thread) reads of the FTL's state: a
// copy the queue publishes after each I/O under a sequence lock. The queue never waits;
// a reader retries while the sequence is odd or changed under it. Every field is atomic
// (relaxed, ordered by the fences), so a read racing a publish is defined and discarded.
struct Published {
	std::atomic<uint64_t> seq{0};
	std::atomic<uint64_t> host_bytes{0}, media_bytes{0}, erased_bytes{0};
	// Per handle: RUAMW in LBAs | kUsedBit once the host wrote through it.
	std::unique_ptr<std::atomic<uint64_t>[]> handle;
	// Host events (Invalid Placement Identifier): the PID of the newest kFdpEventsMax.
	std::atomic<uint16_t> event_pid[nvme::kFdpEventsMax] = {};
	std::atomic<uint32_t> nevents{0};  // ever logged
	// Controller events (Media Reallocated): handle and LBAs moved of the newest
	// kFdpEventsMax; event i (from 0) has Timestamp i + 1, the model's clock.
	std::atomic<uint16_t> ctrl_handle[nvme::kFdpEventsMax] = {};
	std::atomic<uint16_t> ctrl_nlbam[nvme::kFdpEventsMax] = {};
	std::atomic<uint64_t> nctrl{0};  // ever logged
};

// What the device and its queue share. The FTL has one owner: the one open IoQueue, which
// drives it with no lock (the model is one controller, and one submission order keeps its
// figures exact and repeatable). queue_open hands ownership from a closed queue to the
// next one (release on close, acquire on open).
struct State {
	std::unique_ptr<Ftl> ftl;
	UniqueFd fd;
	nvme::DeviceInfo info;
	std::atomic<bool> queue_open{false};
	Published pub;
	// RUH Updates asked for while a queue owns the FTL: one flag per handle, applied by
	// the owner before its next I/O (or when the next queue opens).
	std::unique_ptr<std::atomic<uint8_t>[]> update_req;
	std::atomic<bool> update_pending{false};
	// The owner's: each handle's relocated bytes (and their sum) already logged as events.
	std::vector<uint64_t> reloc_logged;
	uint64_t reloc_logged_all = 0;
};

// A consistent copy of Published, taken by a reader.
struct View {
	model::Stats stats;
	std::vector<uint64_t> handle;  // as Published::handle
	uint16_t event_pid[nvme::kFdpEventsMax] = {};
	uint32_t nevents = 0;
	uint16_t ctrl_handle[nvme::kFdpEventsMax] = {};
	uint16_t ctrl_nlbam[nvme::kFdpEventsMax] = {};
	uint64_t nctrl = 0;
};

View read_view(const State &st)
{
	const Published &p = st.pub;
	View v;
	v.handle.resize(st.ftl->handles());
	for (;;) {
		const uint64_t s0 = p.seq.load(std::memory_order_acquire);
		if (s0 & 1)
			continue;
		v.stats.host_bytes = p.host_bytes.load(std::memory_order_relaxed);
		v.stats.media_bytes = p.media_bytes.load(std::memory_order_relaxed);
		v.stats.erased_bytes = p.erased_bytes.load(std::memory_order_relaxed);
		for (size_t h = 0; h < v.handle.size(); h++)
			v.handle[h] = p.handle[h].load(std::memory_order_relaxed);
		v.nevents = p.nevents.load(std::memory_order_relaxed);
		for (uint32_t i = 0; i < nvme::kFdpEventsMax; i++)
			v.event_pid[i] = p.event_pid[i].load(std::memory_order_relaxed);
		v.nctrl = p.nctrl.load(std::memory_order_relaxed);
		for (uint32_t i = 0; i < nvme::kFdpEventsMax; i++) {
			v.ctrl_handle[i] = p.ctrl_handle[i].load(std::memory_order_relaxed);
			v.ctrl_nlbam[i] = p.ctrl_nlbam[i].load(std::memory_order_relaxed);
		}
		std::atomic_thread_fence(std::memory_order_acquire);
		if (p.seq.load(std::memory_order_relaxed) == s0)
			return v;
	}
}

// The owner's publish of what an I/O changed: the stats and handle h (no other handle's
// RUAMW or usage moves on a write through h; GC writes into its own streams).
void publish(State &st, uint32_t h)
{
	Published &p = st.pub;
	const Ftl &f = *st.ftl;
	const uint64_t s = p.seq.load(std::memory_order_relaxed);
	p.seq.store(s + 1, std::memory_order_relaxed);
	std::atomic_thread_fence(std::memory_order_release);
	p.host_bytes.store(f.stats().host_bytes, std::memory_order_relaxed);
	p.media_bytes.store(f.stats().media_bytes, std::memory_order_relaxed);
	p.erased_bytes.store(f.stats().erased_bytes, std::memory_order_relaxed);
	p.handle[h].store(f.ruamw(h) | (f.handle_used(h) ? kUsedBit : 0),
			  std::memory_order_relaxed);
	p.seq.store(s + 2, std::memory_order_release);
}

// The owner logs what GC relocated since it last looked as Media Reallocated events, one per
// handle whose RUs it copied from (split at NLBAM's 16 bits), under the sequence lock like
// publish(). Nothing to do, and no handle scanned, while GC copied nothing.
void log_relocations(State &st)
{
	const Ftl &f = *st.ftl;
	if (f.stats().relocated_bytes == st.reloc_logged_all)
		return;
	st.reloc_logged_all = f.stats().relocated_bytes;
	Published &p = st.pub;
	const uint64_t s = p.seq.load(std::memory_order_relaxed);
	p.seq.store(s + 1, std::memory_order_relaxed);
	std::atomic_thread_fence(std::memory_order_release);
	uint64_t n = p.nctrl.load(std::memory_order_relaxed);
	for (uint32_t h = 0; h < f.handles(); h++) {
		const uint64_t now = f.handle_stats(h).relocated_bytes;
		uint64_t lbas = (now - st.reloc_logged[h]) / st.info.lba_size;
		st.reloc_logged[h] = now;
		while (lbas) {
			const auto nlbam = static_cast<uint16_t>(std::min<uint64_t>(lbas, 0xFFFF));
			p.ctrl_handle[n % nvme::kFdpEventsMax].store(static_cast<uint16_t>(h),
								     std::memory_order_relaxed);
			p.ctrl_nlbam[n % nvme::kFdpEventsMax].store(nlbam,
								    std::memory_order_relaxed);
			n++;
			lbas -= nlbam;
		}
	}
	p.nctrl.store(n, std::memory_order_relaxed);
	p.seq.store(s + 2, std::memory_order_release);
}

// The FTL's owner applies the RUH Updates asked for since it last looked.
void apply_updates(State &st)
{
	if (!st.update_pending.exchange(false, std::memory_order_acquire))
		return;
	for (uint32_t h = 0; h < st.ftl->handles(); h++) {
		if (!st.update_req[h].exchange(0, std::memory_order_relaxed))
			continue;
		(void)st.ftl->ruh_update(h);  // h is valid: ruh_update() checked it
		publish(st, h);
	}
}

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
	// Call only after winning st->queue_open.
	explicit ModelQueue(std::shared_ptr<State> st) : st_(std::move(st)) { apply_updates(*st_); }
	~ModelQueue() override { st_->queue_open.store(false, std::memory_order_release); }
	ModelQueue(const ModelQueue &) = delete;
	ModelQueue &operator=(const ModelQueue &) = delete;

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
		if (st_->update_pending.load(std::memory_order_relaxed)) [[unlikely]]
			apply_updates(*st_);
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
			uint32_t h = req.handle;
			if (h >= st_->ftl->handles()) {
				// Like a drive: the write lands on the default handle, with an event.
				log_invalid_pid(req.handle);
				h = 0;
			}
			r = st_->ftl->write(h, req.slba, req.nlb);
			log_relocations(*st_);
			publish(*st_, h);
			return r == -ENOSPC ? kStatusCapacityExceeded : r;
		}
		case nvme::IoOp::deallocate:
		case nvme::IoOp::write_zeroes: {
			// A hole reads back as zeros; the model drops the mapping either way.
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
				      static_cast<off_t>(len)) != 0)
				return -errno;
			int r;
			r = st_->ftl->deallocate(req.slba, req.nlb);
			publish(*st_, 0);
			return r;
		}
		case nvme::IoOp::flush: break;
		}
		return -ENOTSUP;
	}

	// Logs the event with the sequence lock held, like publish().
	void log_invalid_pid(uint16_t handle)
	{
		Published &p = st_->pub;
		const uint64_t s = p.seq.load(std::memory_order_relaxed);
		p.seq.store(s + 1, std::memory_order_relaxed);
		std::atomic_thread_fence(std::memory_order_release);
		const uint32_t n = p.nevents.load(std::memory_order_relaxed);
		p.event_pid[n % nvme::kFdpEventsMax].store(handle, std::memory_order_relaxed);
		p.nevents.store(n + 1, std::memory_order_relaxed);
		p.seq.store(s + 2, std::memory_order_release);
	}

	std::shared_ptr<State> st_;
};

class ModelDevice final : public nvme::Device {
public:
	explicit ModelDevice(std::shared_ptr<State> st) : st_(std::move(st)) {}

	const nvme::DeviceInfo &info() const override { return st_->info; }

	Result<std::vector<nvme::Handle>> handles() override
	{
		const View v = read_view(*st_);
		const Ftl &f = *st_->ftl;  // only its immutable configuration
		std::vector<nvme::Handle> hs(f.handles());
		for (uint32_t h = 0; h < f.handles(); h++) {
			hs[h].index = static_cast<uint16_t>(h);
			hs[h].pid = pid_of(st_->info, h);
			hs[h].ruhid = static_cast<uint16_t>(h % st_->info.nruh);
			hs[h].ruht = static_cast<uint8_t>(f.handle_type(h % st_->info.nruh));
			hs[h].ruamw = v.handle[h] & ~kUsedBit;
		}
		return hs;
	}

	Result<std::vector<uint8_t>> log_page(uint8_t lid, uint8_t lsp) override
	{
		const Ftl &f = *st_->ftl;  // only its immutable configuration; state comes from v
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
			const View v = read_view(*st_);
			std::vector<uint8_t> ruha(c.nruh, nvme::kRuhaUnused);
			for (uint32_t h = 0; h < f.handles(); h++)
				if (v.handle[h] & kUsedBit)
					ruha[h % c.nruh] = nvme::kRuhaHostSpecified;
			return nvme::encode_ruh_usage(ruha);
		}
		case nvme::kLidFdpStats: {
			const View v = read_view(*st_);
			nvme::FdpStats s;
			s.hbmw = v.stats.host_bytes;
			s.mbmw = v.stats.media_bytes;
			s.mbe = v.stats.erased_bytes;
			return nvme::encode_fdp_stats(s);
		}
		case nvme::kLidFdpEvents: {
			std::vector<nvme::FdpEvent> ev;
			const View v = read_view(*st_);
			if (lsp & nvme::kLspFdpHostEvents) {
				const uint32_t n = std::min(v.nevents, nvme::kFdpEventsMax);
				for (uint32_t i = v.nevents - n; i < v.nevents; i++) {
					nvme::FdpEvent e{};
					e.type = nvme::kFdpEventInvalidPid;
					e.flags = nvme::kFdpEventFlagPiv | nvme::kFdpEventFlagNsidv;
					e.pid = v.event_pid[i % nvme::kFdpEventsMax];
					e.nsid = st_->info.nsid;
					ev.push_back(e);
				}
			} else {
				ev = controller_events(v);
			}
			return nvme::encode_fdp_events(ev);
		}
		default:
			return make_error(std::errc::invalid_argument,
					  "model: log page " + std::to_string(lid) +
						  " is not an FDP log (0x20-0x23)");
		}
	}

	// Media Reallocated, oldest first: GC's copies out of a handle's RUs (log_relocations).
	std::vector<nvme::FdpEvent> controller_events(const View &v) const
	{
		std::vector<nvme::FdpEvent> ev;
		const uint64_t n = std::min<uint64_t>(v.nctrl, nvme::kFdpEventsMax);
		for (uint64_t i = v.nctrl - n; i < v.nctrl; i++) {
			const uint16_t h = v.ctrl_handle[i % nvme::kFdpEventsMax];
			nvme::FdpEvent e{};
			e.type = nvme::kFdpEventMediaReallocated;
			e.flags = nvme::kFdpEventFlagPiv | nvme::kFdpEventFlagNsidv |
				  nvme::kFdpEventFlagLv;
			e.pid = pid_of(st_->info, h);
			nvme::set_fdp_event_time(e, i + 1);
			e.nsid = st_->info.nsid;
			nvme::set_fdp_event_nlbam(e, v.ctrl_nlbam[i % nvme::kFdpEventsMax]);
			e.rgid = static_cast<uint16_t>(h / st_->info.nruh);
			e.ruhid = static_cast<uint8_t>(h % st_->info.nruh);
			ev.push_back(e);
		}
		return ev;
	}

	// Applied at once when no queue is open (this thread owns the FTL meanwhile);
	// otherwise handed to the open queue, which applies it before its next I/O.
	Result<void> ruh_update(std::span<const uint16_t> handles) override
	{
		const uint32_t nh = st_->ftl->handles();
		for (uint16_t h : handles)
			if (h >= nh)
				return make_error(std::errc::invalid_argument,
						  "RUH Update: no handle " + std::to_string(h) +
							  " (the model has " + std::to_string(nh) +
							  ")");
		for (uint16_t h : handles)
			st_->update_req[h].store(1, std::memory_order_relaxed);
		st_->update_pending.store(true, std::memory_order_release);
		bool expected = false;
		if (st_->queue_open.compare_exchange_strong(expected, true,
							    std::memory_order_acquire)) {
			apply_updates(*st_);
			st_->queue_open.store(false, std::memory_order_release);
		}
		return ok();
	}

	Result<std::unique_ptr<nvme::IoQueue>> open_queue(io_uring &) override
	{
		bool expected = false;
		if (!st_->queue_open.compare_exchange_strong(expected, true,
							     std::memory_order_acquire))
			return guidance_error(
				std::errc::device_or_resource_busy,
				"the FDP SSD model takes one I/O queue at a time (its FTL has "
				"one owner, so its figures are exact and repeatable); close "
				"the other queue, or run kvfdpd with --queues 1");
		return std::unique_ptr<nvme::IoQueue>(new ModelQueue(st_));
	}

private:
	std::shared_ptr<State> st_;
};

}  // namespace

Result<std::unique_ptr<nvme::Device>> open_model_device(const ModelDeviceOptions &opts)
{
	if (opts.data_path.empty())
		return guidance_error(
			std::errc::invalid_argument,
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
	if (static_cast<uint64_t>(sb.st_size) < size &&
	    ftruncate(fd->get(), static_cast<off_t>(size)) != 0)
		return errno_error(errno, "grow " + opts.data_path + " to " + std::to_string(size) +
						  " bytes");

	auto st = std::make_shared<State>();
	st->ftl = std::move(*ftl);
	st->fd = std::move(*fd);
	const uint32_t nh = st->ftl->handles();
	st->pub.handle = std::make_unique<std::atomic<uint64_t>[]>(nh);
	st->update_req = std::make_unique<std::atomic<uint8_t>[]>(nh);
	st->reloc_logged.assign(nh, 0);
	for (uint32_t h = 0; h < nh; h++)
		st->pub.handle[h].store(st->ftl->ruamw(h), std::memory_order_relaxed);
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

}  // namespace kvfdp::model
