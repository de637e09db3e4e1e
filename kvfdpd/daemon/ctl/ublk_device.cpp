// The ublk device's side of kvfdpd's lifecycle: queues, ADD_DEV, user recovery, stop.
#include "kvfdpd/daemon/ctl/ublk_device.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "nvme/stripe.hpp"
#include "kvfdpd/daemon/ctl/notify.hpp"
#include "kvfdpd/daemon/ctl/stop_choice.hpp"
#include "kvfdpd/ublk/ctrl.hpp"
#include "kvfdpd/ublk/features.hpp"

namespace kvfdp::daemon {

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
		return placement::plain_error("ublk device " + std::to_string(id) + " not found (" +
					      info.error().message() +
					      "): nothing to recover; start without --recover");
	s.dev = *info;
	if (!(s.dev.flags & ublk::kFlagUserRecovery))
		return placement::plain_error(
			"ublk device " + std::to_string(id) +
			" was created without user recovery; it cannot be re-attached");
	// The device keeps its stripe's fingerprint (0: one namespace) from ADD_DEV.
	const nvme::StripeDevice *sd = nvme::as_stripe(*s.device);
	if (s.dev.ublksrv_flags != (sd ? sd->fingerprint() : 0))
		return placement::plain_error(
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
		return placement::plain_error(
			"ublk device " + std::to_string(id) + " was created with zero copy (" +
			ublk::data_mode_name(s.data_mode) + "), which the " + s.info.backend +
			" backend cannot serve: recover it with --backend passthru, or delete it");
	if (s.data_mode == ublk::DataMode::copy)
		s.data_note = "ublk device " + std::to_string(id) +
			      " was created in copy mode (recovered as it was)";
	auto params = s.ctrl->get_params(id);
	if (params && params->basic.dev_sectors != s.info.nlb * (s.info.lba_size >> 9))
		return placement::plain_error("ublk device " + std::to_string(id) + " has " +
					      std::to_string(params->basic.dev_sectors) +
					      " sectors but " + s.info.path + " has " +
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
		return placement::plain_error(
			"ublk device " + std::to_string(id) +
			" exists without user recovery (not left by kvfdpd): delete it or pick another --dev-id");
	if (info->state == ublk::kDevLive && info->ublksrv_pid > 0 &&
	    info->ublksrv_pid != getpid() && ::kill(info->ublksrv_pid, 0) == 0)
		return placement::plain_error(
			"ublk device " + std::to_string(id) + " is served by pid " +
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

// With UBLK_F_SAFE_STOP_DEV: TRY_STOP_DEV, which the driver refuses while the disk is open,
// after closing claim (an opener too). false: it was opened after the holder check, so it
// stays like a held disk. A failure other than -EBUSY falls back to STOP_DEV.
namespace {

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

}  // namespace

// Stops serving. remove: STOP_DEV (TRY_STOP_DEV when safe) and DEL_DEV the device; else it
// stays, its I/O held by the driver (user recovery) for the next kvfdpd. claim (an exclusive
// open of the disk that keeps it from being mounted meanwhile) is closed after STOP_DEV:
// DEL_DEV waits for it. safe: the disk was checked free, and a device with SAFE_STOP_DEV is
// stopped only if it still is (a disk opened meanwhile is left instead).
void teardown(State &s, bool remove, UniqueFd *claim, bool safe)
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

}  // namespace kvfdp::daemon
