// kvfdpd's lifecycle: open the backend, create or recover the ublk device, start the queues,
// the tagger and the control socket, reload on SIGHUP, stop on SIGTERM. The control requests
// are answered in control_handlers.cpp, the tagger is owned by tagger_owner.cpp.
#include "userspace/daemon/ctl/daemon.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <dirent.h>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <optional>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "common/log.hpp"
#include "nvme/stripe.hpp"
#include "placement/config.hpp"
#include "userspace/daemon/policy.hpp"
#include "userspace/daemon/ctl/control_handlers.hpp"
#include "userspace/daemon/ctl/daemon_metrics.hpp"
#include "userspace/daemon/ctl/daemon_state.hpp"
#include "proto/health.hpp"
#include "userspace/daemon/ctl/http_metrics.hpp"
#include "userspace/daemon/ctl/notify.hpp"
#include "userspace/daemon/ctl/ns_claim.hpp"
#include "userspace/daemon/ctl/stop_choice.hpp"
#include "userspace/ublk/ctrl.hpp"
#include "userspace/ublk/features.hpp"

namespace kvfdp::daemon {

namespace {

Error fail(const std::string &msg)
{
	return plain_error(msg);
}

// The steps of a start, timed: one line at ready says where a (re)start spent its time
// (docs/deploy.md "kill -9 and restart" reads it).
class StartSteps {
public:
	// Takes the time from exec to now (the process's start time, /proc/self/stat field 22,
	// in clock ticks since boot, against CLOCK_BOOTTIME).
	StartSteps()
	{
		char buf[1024];
		const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
		const ssize_t n = fd >= 0 ? ::read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			::close(fd);
		timespec boot{};
		const char *close_paren = n > 0 ? (buf[n] = 0, std::strrchr(buf, ')')) : nullptr;
		unsigned long long start_ticks = 0;
		if (close_paren && ::clock_gettime(CLOCK_BOOTTIME, &boot) == 0 &&
		    std::sscanf(
			    close_paren + 2,
			    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			    &start_ticks) == 1) {
			const long hz = ::sysconf(_SC_CLK_TCK);
			const double since = boot.tv_sec + boot.tv_nsec / 1e9 -
					     static_cast<double>(start_ticks) / (hz > 0 ? hz : 100);
			if (since >= 0)
				exec_ms_ = static_cast<long>(since * 1000);
		}
	}
	void mark(const char *step)
	{
		const auto now = std::chrono::steady_clock::now();
		text_ += (text_.empty() ? "" : ", ") + std::string(step) + " " +
			 std::to_string(ms(last_, now));
		last_ = now;
	}
	// "T ms after exec (ms per step: main M, checks C, ...)": main is from the process's start
	// (its fork; one clock tick, 10 ms, of resolution) to main(), left out where /proc is not
	// readable.
	[[nodiscard]] std::string line() const
	{
		const long main_ms = ms(t0_, last_);
		if (exec_ms_ < 0)
			return std::to_string(main_ms) + " ms after main (ms per step: " + text_ +
			       ")";
		return std::to_string(exec_ms_ + main_ms) + " ms after exec (ms per step: main " +
		       std::to_string(exec_ms_) + ", " + text_ + ")";
	}

private:
	static long ms(std::chrono::steady_clock::time_point a,
		       std::chrono::steady_clock::time_point b)
	{
		return static_cast<long>(
			std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
	}
	std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now(), last_ = t0_;
	std::string text_;
	long exec_ms_ = -1;
};

void send_notify(const std::string &msg)
{
	const int r = notify(msg);
	if (r < 0)
		log::warn("notifying the service manager (NOTIFY_SOCKET): %s", std::strerror(-r));
}

// Waits (bounded) for a device node to appear: devtmpfs creates it asynchronously.
Result<UniqueFd> open_when_present(const std::string &path, int flags)
{
	for (int i = 0; i < 100; i++) {
		int fd = ::open(path.c_str(), flags | O_CLOEXEC);
		if (fd >= 0)
			return UniqueFd(fd);
		if (errno != ENOENT)
			return errno_error(errno, "open " + path);
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
	}
	return errno_error(ENOENT, "open " + path + " (the node never appeared)");
}

// The config's top-level keys stand in for their options where the command line gives none
// (read at start only).
Result<void> top_level_keys(State &s, const PolicyConfig &cfg)
{
	if (s.opts.metrics_listen.empty() && !cfg.metrics_listen.empty()) {
		if (auto a = parse_listen_address(cfg.metrics_listen); !a)
			return fail(cfg.source + ":" + std::to_string(cfg.metrics_listen_line) +
				    ": metrics_listen: " + a.error().message());
		s.opts.metrics_listen = cfg.metrics_listen;
	}
	// A twin bound given either way makes a refused twin plan stop the start.
	if (!s.opts.twin.memory_given && cfg.twin_memory) {
		s.opts.twin.memory_bytes = *cfg.twin_memory;
		s.opts.twin.memory_given = true;
		s.opts.twin.memory_from =
			cfg.source + ":" + std::to_string(cfg.twin_memory_line) + ": twin_memory";
	}
	if (!s.opts.require_tagger && cfg.require_tagger) {
		s.opts.require_tagger = true;
		s.opts.require_tagger_from =
			cfg.source + ":" + std::to_string(cfg.require_tagger_line);
	}
	return ok();
}

// What can be checked before the backend is opened (opening the model or file backend
// creates its data file): the config parses and, where the options decide the handles,
// fits them; --ready-file can be written.
Result<void> check_before_open(State &s)
{
	auto cfg = placement::load_config(s.opts.config_path, !s.opts.config_explicit);
	if (!cfg)
		return std::move(cfg).error();
	// [device] paths stand in for --device where the command line names none; stripe_size for
	// --stripe-size on any stripe, whoever named its members (kvfdpd.service always passes one
	// --device), and means nothing to a single namespace. Read at start only: a reload does not
	// move the disk.
	BackendOptions &b = s.opts.backend;
	std::string &single = b.kind == "model" || b.kind == "file" ? b.file : b.device;
	if (single.empty() && b.members.empty() && !cfg->devices.empty()) {
		single = cfg->devices.front();
		if (cfg->devices.size() > 1)
			b.members = cfg->devices;
	}
	if (b.stripe_bytes && b.members.size() < 2)
		return fail(
			"--stripe-size is for a stripe: give --device two or more times (or [device] paths with two "
			"or more namespaces), or drop it");
	if (!b.stripe_bytes && b.members.size() >= 2)
		b.stripe_bytes = cfg->stripe_bytes;
	if (auto r = top_level_keys(s, *cfg); !r)
		return r;
	// With --no-tagger, require_tagger cannot be met: refused before anything is made.
	if (s.opts.require_tagger && s.opts.no_tagger)
		return fail(proto::require_tagger_refusal(s.opts.require_tagger_from,
							  "disabled with --no-tagger"));
	if (auto nruh = handles_before_open(s.opts.backend))
		if (auto p = make_policy(*cfg, *nruh); !p)
			return std::move(p).error();
	if (!s.opts.ready_file.empty()) {
		const size_t slash = s.opts.ready_file.rfind('/');
		const std::string dir = slash == std::string::npos ? "."
					: slash == 0               ? "/"
						     : s.opts.ready_file.substr(0, slash);
		if (::access(dir.c_str(), W_OK | X_OK) != 0)
			return errno_error(errno, "--ready-file " + s.opts.ready_file +
							  ": its directory " + dir +
							  " is not writable");
	}
	return ok();
}

// Opens the device and checks it can carry the policy; nothing on the ublk side yet.
Result<void> open_device(State &s)
{
	auto dev = open_backend(s.opts.backend);
	if (!dev)
		return std::move(dev).error();
	s.device = std::move(*dev);
	s.info = s.device->info();
	if (s.info.backend == "passthru" && !s.info.fdp_enabled)
		return fail(
			s.info.path + " has no FDP enabled (" +
			(s.info.fdp_supported
				 ? "the controller supports FDP but it is off for this endurance group"
				 : "the controller does not support FDP") +
			"): use an FDP namespace, or --backend file for no placement");
	if (s.info.fdp_enabled) {
		auto hs = s.device->handles();
		if (!hs)
			return std::move(hs).error();
		s.handles = std::move(*hs);
		if (s.handles.empty())
			return fail(s.info.path +
				    " reports FDP enabled but RUH Status lists no handles");
		s.nruh = static_cast<uint16_t>(s.handles.size());
	}
	if (s.info.lba_size == 0 || s.info.nlb == 0 || s.info.max_transfer < s.info.lba_size)
		return fail(s.info.path + ": the device reports no usable size or transfer limit");
	if (const nvme::StripeDevice *sd = nvme::as_stripe(*s.device)) {
		log::info(
			"striped across %zu members (%s), stripe size %llu bytes: %llu bytes = %zu x %llu, the smallest "
			"member in whole stripes; %u handles on each member",
			sd->members().size(), s.info.path.c_str(),
			static_cast<unsigned long long>(sd->stripe_bytes()),
			static_cast<unsigned long long>(s.info.nlb * s.info.lba_size),
			sd->members().size(),
			static_cast<unsigned long long>(sd->member_nlb() * s.info.lba_size),
			s.nruh);
		if (!sd->note().empty())
			log::info("%s", sd->note().c_str());
	}
	return ok();
}

Result<void> create_queues(State &s, StartSteps &steps)
{
	EngineConfig ec;
	ec.depth = s.dev.queue_depth;
	ec.io_buf_bytes = s.dev.max_io_buf_bytes;
	ec.lba_size = s.info.lba_size;
	ec.max_transfer = s.info.max_transfer;
	ec.nlb = s.info.nlb;
	ec.nruh = s.nruh;
	ec.fixed_buffers = s.opts.fixed_buffers;
	ec.zero_copy = ublk::is_zero_copy(s.data_mode);
	ec.learned = s.learned.get();
	if (const nvme::StripeDevice *sd = nvme::as_stripe(*s.device))
		ec.stripe = sd->layout();
	uint32_t fixed_bytes = 0;
	if (ec.fixed_buffers && !ec.zero_copy) {
		// The largest request is the device's max_sectors (a recovered device keeps the one
		// it was created with); unknown, it is the whole buffer.
		uint32_t max_request = ec.io_buf_bytes;
		if (auto p = s.ctrl->get_params(s.dev.dev_id); p && p->basic.max_sectors)
			max_request = std::min<uint32_t>(max_request, p->basic.max_sectors << 9);
		const long page = ::sysconf(_SC_PAGESIZE);
		fixed_bytes = fixed_buffer_bytes(ec.io_buf_bytes, max_request, s.info.max_segments,
						 page > 0 ? static_cast<uint32_t>(page) : 4096);
		if (fixed_bytes == 0) {
			ec.fixed_buffers = false;
			log::info(
				"requests of up to %u bytes would need more than max_segments (%u) pages of a registered "
				"buffer, which Linux 6.1 refuses: using unregistered buffers",
				max_request, s.info.max_segments);
		}
	}
	// The queues are made side by side, one thread each: in copy mode each faults in (zeroes)
	// and registers depth x io_buf_bytes of buffers, most of a restart's time (docs/deploy.md
	// "kill -9 and restart"); in parallel it takes one queue's time where CPUs allow.
	const uint16_t nq = s.dev.nr_hw_queues;
	if (s.twin)
		s.twin->add_rings(nq);
	std::vector<std::optional<Result<std::unique_ptr<UblkQueue>>>> made(nq);
	auto make = [&](uint16_t q) {
		QueueSetup qs;
		qs.q_id = q;
		qs.char_fd = s.char_fd.get();
		qs.device = s.device.get();
		qs.slots = s.tagger.slot_base();
		qs.policy = &s.table;
		qs.engine = ec;
		qs.engine.twin = s.twin ? &s.twin->ring(q) : nullptr;
		qs.fixed_buf_bytes = fixed_bytes;
		qs.register_bufs = s.data_mode == ublk::DataMode::zero_copy_reg;
		qs.batch = (s.dev.flags & ublk::kFlagBatchIo) !=
			   0;  // a recovered device keeps its mode
		made[q].emplace(UblkQueue::create(qs));
	};
	std::vector<std::thread> makers;
	for (uint16_t q = 1; q < nq; q++)
		makers.emplace_back(make, q);
	if (nq > 0)
		make(0);
	for (std::thread &t : makers)
		t.join();
	for (auto &uq : made) {
		if (!*uq)
			return std::move(*uq).error();
		s.queues.push_back(std::move(**uq));
	}
	steps.mark(ec.zero_copy       ? "queues"
		   : ec.fixed_buffers ? "queues+buffers"
				      : "queues+unregistered-buffers");
	for (auto &q : s.queues)
		q->start();
	for (auto &q : s.queues)
		while (!q->fetched())
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
	for (auto &q : s.queues)
		if (q->exit_status())
			return errno_error(q->exit_status(), "queue FETCH_REQ");
	steps.mark("fetch");
	return ok();
}

Result<void> add_device(State &s)
{
	ublk::DevSpec spec;
	spec.queues = s.opts.queues;
	spec.depth = s.opts.depth;
	spec.io_buf_bytes = s.opts.io_buf_bytes;
	spec.dev_id = s.opts.dev_id;
	// The stripe's member list and stripe size, kept by the driver for --recover / --attach.
	const nvme::StripeDevice *sd = nvme::as_stripe(*s.device);
	spec.server_flags = sd ? sd->fingerprint() : 0;
	const Result<uint64_t> features = s.ctrl->get_features();
	const ublk::DataModeChoice dm = ublk::choose_data_mode(
		features, s.info.backend, s.opts.zero_copy, s.opts.zero_copy_register);
	spec.flags |= dm.add_flags;
	ublk::FeatureWants wants;
	wants.batch_io = s.opts.batch_io;
	const ublk::FeatureChoice fc = ublk::choose_features(features, wants);
	spec.flags |= fc.add_flags;
	s.ublk_note = fc.note;
	auto info = s.ctrl->add_dev(spec);
	if (!info)
		return std::move(info).error();
	s.dev = *info;
	s.dev_added = true;
	s.data_mode = ublk::data_mode_of(s.dev.flags);
	s.data_note = dm.note;
	if (dm.mode != s.data_mode)
		s.data_note = std::string("ADD_DEV did not keep ") +
			      (dm.mode == ublk::DataMode::zero_copy ? "UBLK_F_AUTO_BUF_REG"
								    : "UBLK_F_SUPPORT_ZERO_COPY");
	ublk::ParamInput pi;
	pi.lba_size = s.info.lba_size;
	pi.nlb = s.info.nlb;
	pi.max_transfer = s.info.max_transfer;
	pi.io_buf_bytes = s.dev.max_io_buf_bytes;
	pi.volatile_cache = s.info.volatile_cache;
	if (sd) {
		pi.stripe_bytes = sd->stripe_bytes();
		pi.stripe_members = static_cast<uint32_t>(sd->members().size());
	}
	pi.fua = false;  // FUA writes are emulated by the block layer with a flush
	auto params = ublk::make_params(pi);
	if (!params)
		return std::move(params).error();
	return s.ctrl->set_params(s.dev.dev_id, *params);
}

// --recover: the device must exist with recovery enabled and match this namespace.
Result<void> begin_recovery(State &s)
{
	const uint32_t id = static_cast<uint32_t>(s.opts.recover_id);
	auto info = s.ctrl->get_dev_info(id);
	if (!info)
		return fail("ublk device " + std::to_string(id) + " not found (" +
			    info.error().message() +
			    "): nothing to recover; start without --recover");
	s.dev = *info;
	if (!(s.dev.flags & ublk::kFlagUserRecovery))
		return fail("ublk device " + std::to_string(id) +
			    " was created without user recovery; it cannot be re-attached");
	// The device keeps its stripe's fingerprint (0: one namespace) from ADD_DEV.
	const nvme::StripeDevice *sd = nvme::as_stripe(*s.device);
	if (s.dev.ublksrv_flags != (sd ? sd->fingerprint() : 0))
		return fail(
			"ublk device " + std::to_string(id) + " was created on " +
			(s.dev.ublksrv_flags
				 ? "a stripe of other members, member order or stripe size"
				 : "one namespace") +
			", not on " +
			(sd ? "this stripe of " + std::to_string(sd->members().size()) + " members"
			    : s.info.path) +
			": give the --device list (in its order) and --stripe-size it was created with, or delete it");
	s.data_mode = ublk::data_mode_of(s.dev.flags);
	if (ublk::is_zero_copy(s.data_mode) && s.info.backend != "passthru")
		return fail(
			"ublk device " + std::to_string(id) + " was created with zero copy (" +
			ublk::data_mode_name(s.data_mode) + "), which the " + s.info.backend +
			" backend cannot serve: recover it with --backend passthru, or delete it");
	if (s.data_mode == ublk::DataMode::copy)
		s.data_note = "ublk device " + std::to_string(id) +
			      " was created in copy mode (recovered as it was)";
	auto params = s.ctrl->get_params(id);
	if (params && params->basic.dev_sectors != s.info.nlb * (s.info.lba_size >> 9))
		return fail("ublk device " + std::to_string(id) + " has " +
			    std::to_string(params->basic.dev_sectors) + " sectors but " +
			    s.info.path + " has " +
			    std::to_string(s.info.nlb * (s.info.lba_size >> 9)) +
			    ": recover it with the namespace it was created on");
	// The old server's queues are torn down asynchronously after it died: -EBUSY until then.
	int ret = -EBUSY;
	// Polled every 10 ms (a restart's time counts), for up to 30 s.
	for (int i = 0; i < 3000 && ret == -EBUSY; i++) {
		ret = s.ctrl->start_user_recovery(id);
		if (ret == -EBUSY)
			std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	if (ret < 0)
		return errno_error(ret, "ublk START_USER_RECOVERY of device " + std::to_string(id) +
						" (is its old kvfdpd still running?)");
	s.recovered = true;
	s.state = "recovering";
	return ok();
}

// --attach: a device of --dev-id left by a killed kvfdpd (user recovery) is re-attached,
// an absent one is created. Sets recover_id when there is one to recover.
Result<void> choose_attach(State &s)
{
	const uint32_t id = static_cast<uint32_t>(s.opts.dev_id);
	auto info = s.ctrl->get_dev_info(id);
	if (!info)
		return ok();  // no such device: create it
	if (!(info->flags & ublk::kFlagUserRecovery))
		return fail(
			"ublk device " + std::to_string(id) +
			" exists without user recovery (not left by kvfdpd): delete it or pick another --dev-id");
	if (info->state == ublk::kDevLive && info->ublksrv_pid > 0 &&
	    info->ublksrv_pid != getpid() && ::kill(info->ublksrv_pid, 0) == 0)
		return fail("ublk device " + std::to_string(id) + " is served by pid " +
			    std::to_string(info->ublksrv_pid) +
			    " (another kvfdpd?): stop it first or pick another --dev-id");
	log::info("ublk device %u was left by a stopped kvfdpd: re-attaching (recovery)", id);
	s.opts.recover_id = static_cast<int>(id);
	return ok();
}

// The ublk disk pid serves ("" when none), for naming another kvfdpd in a refusal.
std::string served_disk(State &s, int pid)
{
	DIR *d = ::opendir("/sys/class/ublk-char");
	if (!d)
		return "";
	std::string out;
	while (dirent *de = ::readdir(d)) {
		if (std::strncmp(de->d_name, "ublkc", 5) != 0)
			continue;
		const auto info =
			s.ctrl->get_dev_info(static_cast<uint32_t>(std::atoi(de->d_name + 5)));
		if (info && info->ublksrv_pid == pid)
			out = ublk::block_path(info->dev_id);
	}
	::closedir(d);
	return out;
}

// Loads the tagger (or re-opens the set a killed kvfdpd left pinned for this device) and
// gives it the policy's directory rules.
void load_tagger(State &s)
{
	const std::string &root = s.opts.bpf_pin_root;
	const std::string pin_dir = root.empty() || root == "none"
					    ? ""
					    : root + "/ublkb" + std::to_string(s.dev.dev_id);
	s.tagger.load(s.opts.no_tagger, s.dev.nr_hw_queues, s.dev.queue_depth, pin_dir,
		      !s.recovered);
	s.tagger.apply_rules(nullptr, *current_policy(s));
}

// With UBLK_F_SAFE_STOP_DEV: TRY_STOP_DEV, which the driver refuses while the disk is open,
// after closing claim (an opener too). false: it was opened after the holder check, so it
// stays like a held disk. A failure other than -EBUSY falls back to STOP_DEV.
bool try_safe_stop(State &s, UniqueFd *claim)
{
	if (claim)
		claim->reset();
	const int r = s.ctrl->try_stop_dev(s.dev.dev_id);
	if (r == 0)
		return true;
	const std::string bdev = ublk::block_path(s.dev.dev_id);
	if (r == -EBUSY) {
		const std::string holder = disk_holder(disk_lookup(bdev));
		log::warn(
			"%s was opened as kvfdpd stopped (%s): the driver refused TRY_STOP_DEV, so it is left, I/O held, "
			"for the next kvfdpd (--dev-id %u --attach)",
			bdev.c_str(),
			holder.empty() ? "by an opener /proc does not show" : holder.c_str(),
			s.dev.dev_id);
		return false;
	}
	log::warn("ublk TRY_STOP_DEV of %s: %s; stopping it with STOP_DEV", bdev.c_str(),
		  std::strerror(-r));
	if (auto st = s.ctrl->stop_dev(s.dev.dev_id); !st)
		log::warn("%s", st.error().message().c_str());
	return true;
}

// Stops serving. remove: STOP_DEV (TRY_STOP_DEV when safe) and DEL_DEV the device; else it
// stays, its I/O held by the driver (user recovery) for the next kvfdpd. claim (an exclusive
// open of the disk that keeps it from being mounted meanwhile) is closed after STOP_DEV:
// DEL_DEV waits for it. safe: the disk was checked free, and a device with SAFE_STOP_DEV is
// stopped only if it still is (a disk opened meanwhile is left instead).
void teardown(State &s, bool remove, UniqueFd *claim = nullptr, bool safe = false)
{
	if (s.server)
		s.server->stop();
	if (s.loop)
		s.loop->stop();  // and /metrics, should it still be on the loop
	s.tagger.stop_events();
	if (remove && s.dev_added) {
		if (safe && (s.dev.flags & ublk::kFlagSafeStopDev)) {
			remove = try_safe_stop(s, claim);
		} else if (auto r = s.ctrl->stop_dev(s.dev.dev_id); !r) {
			log::warn("%s", r.error().message().c_str());
		}
	}
	if (claim)
		claim->reset();
	for (auto &q : s.queues)
		q->stop();
	for (auto &q : s.queues)
		q->join();
	if (s.learned)
		s.learned->stop();  // a last regroup and save, with no writes in flight
	s.queues.clear();
	s.char_fd.reset();
	if (remove && s.dev_added) {
		auto r = s.ctrl->del_dev(s.dev.dev_id);
		if (!r)
			log::warn("%s", r.error().message().c_str());
		s.dev_added = false;
		s.tagger.unpin();  // the disk is gone: so are its programs
	}
}

// The stop of a live device (SIGTERM, SIGINT, or a failure after it went live): --keep
// leaves it; otherwise it is removed unless it is held (mounted, dm/md, swap) and not
// --force-remove, when it is left like --keep. One line says which.
void stop_live(State &s)
{
	const std::string bdev = ublk::block_path(s.dev.dev_id);
	const std::string id = std::to_string(s.dev.dev_id);
	DiskUse use;
	if (!s.opts.keep)
		use = check_disk_use(bdev, "/sys/block/ublkb" + id + "/holders");
	const bool remove = should_remove(s.opts.keep, s.opts.force_remove, use.held);
	const std::string reattach = "the next kvfdpd to re-attach (--dev-id " + id +
				     " --attach, or --recover " + id + ")";
	if (s.opts.keep) {
		log::info("%s kept for %s", bdev.c_str(), reattach.c_str());
	} else if (!remove) {
		const std::string what =
			use.held == Held::yes
				? " is in use (" + use.why + ")"
				: ": cannot tell whether it is in use (" + use.why + ")";
		log::warn("%s%s: leaving it, I/O held, for %s; unmount it first to remove it",
			  bdev.c_str(), what.c_str(), reattach.c_str());
	} else if (use.held != Held::no) {
		log::warn(
			"%s is in use (%s) but --force-remove: removing it (its users get I/O errors; kvfdpd "
			"exits once it is unmounted)",
			bdev.c_str(), use.why.c_str());
	} else {
		log::info("%s draining and removing", bdev.c_str());
	}
	send_notify(stopping_message(remove ? "draining and removing " + bdev
					    : "stopping, " + bdev + " left for " + reattach));
	teardown(s, remove, &use.claim, !s.opts.force_remove);
}

// What a start holds beside State until run() returns: the timed steps, the /metrics server
// and the namespace claims (released in the reverse order).
struct Serving {
	StartSteps steps;
	std::unique_ptr<HttpMetricsServer> http;
	std::vector<NsClaim> claims;
};

// Logs e as the one line of a refusal and gives the exit code to return.
int refuse(const Error &e, int code)
{
	log::error("%s", e.message().c_str());
	return code;
}

// Every check that can be made before anything is made: the command line (kExitUsage), then
// the config and --ready-file (kExitConfig). 0: go on.
int validate(State &s)
{
	if (s.opts.depth == 0 || s.opts.depth > ublk::kMaxQueueDepth) {
		log::error("--depth must be 1..%u", ublk::kMaxQueueDepth);
		return kExitUsage;
	}
	if (static_cast<uint32_t>(s.opts.queues) * s.opts.depth > KVFDP_MAX_SLOTS) {
		log::error(
			"--queues x --depth = %u exceeds the tagger's %u slots; lower one of them",
			static_cast<unsigned>(s.opts.queues) * s.opts.depth, KVFDP_MAX_SLOTS);
		return kExitUsage;
	}
	if (s.opts.keep && s.opts.force_remove) {
		log::error("--keep and --force-remove contradict each other: give one");
		return kExitUsage;
	}
	if (s.opts.io_buf_bytes < 4096 || s.opts.io_buf_bytes % 4096) {
		log::error("--io-buf must be a multiple of 4096 bytes");
		return kExitUsage;
	}
	if (s.opts.attach && (s.opts.dev_id < 0 || s.opts.recover_id >= 0)) {
		log::error(
			"--attach needs --dev-id N (and no --recover): it re-attaches to device N or creates it");
		return kExitUsage;
	}
	if (!s.opts.metrics_listen.empty())
		if (auto a = parse_listen_address(s.opts.metrics_listen); !a)
			return refuse(a.error(), kExitUsage);
	if (auto r = check_before_open(s); !r)
		return refuse(r.error(), kExitConfig);
	return 0;
}

// Binds GET /metrics (off by default) and the control socket, so that a port in use or a bad
// socket path is refused before the model's --file or any ublk device is made; both are
// served, on one event loop, once the device is live.
Result<void> bind_sockets(State &s, std::unique_ptr<HttpMetricsServer> &http)
{
	auto loop = EventLoop::create();
	if (!loop)
		return std::move(loop).error();
	s.loop = std::move(*loop);
	if (!s.opts.metrics_listen.empty()) {
		HttpMetricsOptions ho;
		ho.listen = s.opts.metrics_listen;
		auto h = HttpMetricsServer::listen(ho, [&s] { return metrics_exposition(s); });
		if (!h)
			return std::move(h).error();
		http = std::move(*h);
	}
	auto server = ControlServer::listen(s.opts.socket_path, [&s](std::string_view line) {
		return handle_control_line(s, line);
	});
	if (!server)
		return std::move(server).error();
	s.server = std::move(*server);
	return ok();
}

// With the device open: the queue count (--queues auto), the learner, the policy and the
// ublk control device.
Result<void> prepare_serving(State &s)
{
	if (s.opts.queues == 0)
		s.opts.queues = auto_queue_count(usable_cpus(), s.opts.depth, KVFDP_MAX_SLOTS,
						 s.info.backend == "model");
	if (s.opts.learn && s.nruh > 1) {
		LearnedOptions lo;
		lo.state_path = s.opts.learn_state;
		lo.period_s = s.opts.learn_period_s;
		lo.name_of = [&names = s.tagger.writer_names()](uint32_t w) {
			return names.identity_of(w);
		};
		s.learned = LearnedPlacement::create(*s.device, s.nruh, lo);
	} else if (s.opts.learn) {
		log::info(
			"--placement learned: %u handle(s), nothing to learn; every write on handle 0",
			s.nruh);
	}
	auto twin = twin::twin_for(s.info, s.nruh,
				   s.info.backend == "model" ? s.opts.backend.op : 0, s.opts.twin);
	if (!twin)  // the live WAF twin (docs/twin.md)
		return std::move(twin).error();
	s.twin = std::move(*twin);
	if (s.nruh > 0 && !nvme::as_stripe(*s.device)) {  // docs/twin.md, Noisy handles
		std::vector<uint16_t> pids;
		for (const nvme::Handle &h : s.handles)
			pids.push_back(h.pid);
		s.drive_relocations = std::make_unique<DriveRelocations>(
			std::move(pids), s.info.nsid, s.info.lba_size);
	}
	if (auto g = reload_policy(s); !g)
		return std::move(g).error();
	auto ctrl = ublk::Control::open();
	if (!ctrl)
		return std::move(ctrl).error();
	s.ctrl = std::move(*ctrl);
	return ok();
}

// One kvfdpd per namespace, none on a mounted or held one: before any ublk device exists. A
// stripe claims each member (a refusal names it). Both NVMe backends claim (passthru its
// /dev/ngXnY, streams its /dev/nvmeXnY); file and model have no namespace.
Result<void> claim_namespaces(State &s, std::vector<NsClaim> &claims)
{
	if (s.info.backend != "passthru" && s.info.backend != "streams")
		return ok();
	std::vector<std::string> nodes{s.info.path};
	const nvme::StripeDevice *sd = nvme::as_stripe(*s.device);
	if (sd) {
		nodes.clear();
		for (const nvme::StripeMember &m : sd->members())
			nodes.push_back(m.path);
	}
	for (size_t m = 0; m < nodes.size(); m++) {
		auto c = claim_namespace(nodes[m], [&s](int pid) { return served_disk(s, pid); });
		if (!c)
			return fail((sd ? nvme::stripe_member_name(m, nodes[m]) + ": " : "") +
				    c.error().message());
		claims.push_back(std::move(*c));
	}
	return ok();
}

// Creates (or starts recovering) the ublk device, loads the tagger, starts the queues and
// the device. 0, or the exit code of a refusal, the new device removed first.
int bring_up(State &s, StartSteps &steps)
{
	Result<void> r = s.opts.recover_id >= 0 ? begin_recovery(s) : add_device(s);
	steps.mark(s.opts.recover_id >= 0 ? "start-recovery" : "add-device");
	if (r) {
		load_tagger(s);
		steps.mark("tagger");
		if (s.opts.require_tagger && !s.tagger.active()) {
			log::error("%s", proto::require_tagger_refusal(s.opts.require_tagger_from,
								       s.tagger.reason())
						 .c_str());
			teardown(s, true);  // the new device goes; a device being recovered stays
			return kExitConfig;
		}
	}
	if (r) {
		auto cfd = open_when_present(ublk::char_path(s.dev.dev_id), O_RDWR);
		if (cfd)
			s.char_fd = std::move(*cfd);
		else
			r = std::move(cfd).error();
		steps.mark("char-device");
	}
	if (r)
		r = create_queues(s, steps);
	if (r) {
		const int32_t pid = static_cast<int32_t>(getpid());
		r = s.recovered ? s.ctrl->end_user_recovery(s.dev.dev_id, pid)
				: s.ctrl->start_dev(s.dev.dev_id, pid);
		steps.mark(s.recovered ? "end-recovery" : "start-device");
	}
	if (!r) {
		const int code = s.dev_added || s.recovered ? kExitRuntime : kExitConfig;
		log::error("%s", r.error().message().c_str());
		teardown(s, true);  // an added device goes; a device being recovered stays
		return code;
	}
	return 0;
}

// The device is live: the tagger watches it, the servers serve, and the log, --ready-file
// and the service manager are told. 0, or kExitConfig where require_tagger is not met.
int go_live(State &s, Serving &sv)
{
	s.dev_added = true;  // a recovered device is ours to remove on SIGTERM too
	s.state = "live";
	s.tagger.watch_disk(ublk::block_path(s.dev.dev_id));
	if (s.opts.require_tagger && !s.tagger.active()) {
		log::error("%s", proto::require_tagger_refusal(s.opts.require_tagger_from,
							       s.tagger.reason())
					 .c_str());
		stop_live(s);
		return kExitConfig;
	}
	s.tagger.start_events();
	if (s.learned)
		s.learned->start();
	sv.steps.mark("watch");
	s.server->start(*s.loop);
	if (sv.http) {
		sv.http->start(*s.loop);
		log::info("metrics: http://%s/metrics", sv.http->address().c_str());
	}
	s.loop->start();
	const std::string bdev = ublk::block_path(s.dev.dev_id);
	log::info("%s %s: %s backend %s, %u handles, %u queue(s) x %u, tagging %s, %s%s%s",
		  bdev.c_str(), s.recovered ? "recovered" : "ready", s.info.backend.c_str(),
		  s.info.path.c_str(), s.nruh, s.dev.nr_hw_queues, s.dev.queue_depth,
		  s.tagger.active() ? "on" : "off", ublk::data_mode_name(s.data_mode),
		  s.data_note.empty() ? "" : ": ", s.data_note.c_str());
	log::info("%s %s in %s", bdev.c_str(), s.recovered ? "recovered" : "ready",
		  sv.steps.line().c_str());
	if (!s.opts.ready_file.empty()) {
		const std::string tmp = s.opts.ready_file + ".tmp";
		if (FILE *f = std::fopen(tmp.c_str(), "w")) {
			std::fprintf(f, "%s %u\n", bdev.c_str(), s.dev.dev_id);
			std::fclose(f);
			std::rename(tmp.c_str(), s.opts.ready_file.c_str());
		}
	}
	// Serving unplaced is said where it is seen: the log, the unit's STATUS=, `kvfdp status`.
	const proto::Health health = proto::health_of(s.tagger.active(), s.tagger.reason());
	if (health.degraded)
		log::warn("DEGRADED: %s", health.why.c_str());
	send_notify(ready_message(proto::serving_status("serving " + bdev, health)));
	return 0;
}

// Sockets, device, policy, claims, the ublk device and its queues, then live. 0, or the exit
// code of a refusal (kExitConfig and 1 before any ublk device exists).
int start(State &s, Serving &sv)
{
	if (auto r = bind_sockets(s, sv.http); !r)
		return refuse(r.error(), kExitConfig);
	sv.steps.mark("checks");
	if (auto r = open_device(s); !r)
		return refuse(r.error(), 1);
	sv.steps.mark("device");
	if (auto r = prepare_serving(s); !r)
		return refuse(r.error(), 1);
	sv.steps.mark("policy");
	if (auto r = claim_namespaces(s, sv.claims); !r)
		return refuse(r.error(), 1);
	if (s.opts.attach)
		if (auto a = choose_attach(s); !a)
			return refuse(a.error(), 1);
	sv.steps.mark("claim");
	if (const int code = bring_up(s, sv.steps))
		return code;
	return go_live(s, sv);
}

// Serves until SIGTERM or SIGINT; SIGHUP reloads the policy (a refused one keeps the old).
void serve(State &s)
{
	const std::string bdev = ublk::block_path(s.dev.dev_id);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig != SIGHUP)
			return;
		send_notify(reloading_message(monotonic_usec()));
		auto g = reload_policy(s);
		if (g)
			log::info("policy reloaded (generation %llu)",
				  static_cast<unsigned long long>(*g));
		else
			log::error("%s; old policy kept", g.error().message().c_str());
		send_notify(ready_message(proto::serving_status(
			g ? "serving " + bdev + ", policy generation " + std::to_string(*g)
			  : "serving " + bdev + ", reload refused (old policy kept)",
			proto::health_of(s.tagger.active(), s.tagger.reason()))));
	}
}

// The stop after a signal: /metrics first (its renders read the queues), then the device.
void stop(State &s, Serving &sv)
{
	if (sv.http)
		sv.http->stop();
	stop_live(s);
	if (!s.opts.ready_file.empty())
		::unlink(s.opts.ready_file.c_str());
}

int run(State &s)
{
	Serving sv;
	if (const int code = validate(s))
		return code;
	if (const int code = start(s, sv))
		return code;
	serve(s);
	stop(s, sv);
	return 0;
}

}  // namespace

int run_daemon(const DaemonOptions &opts)
{
	// Signals are taken synchronously by the main thread; every other thread blocks them.
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, nullptr);
	std::signal(SIGPIPE, SIG_IGN);
	State s;
	s.opts = opts;
	return run(s);
}

}  // namespace kvfdp::daemon
