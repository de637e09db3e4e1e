// kvfdpd's lifecycle: open the backend, create or recover the ublk device, start the queues,
// the tagger and the control socket, reload on SIGHUP, stop on SIGTERM. The ublk device's part
// (ADD_DEV, recovery, queues, stop) is ublk_device.cpp's, the control requests are answered
// in control_handlers.cpp, the tagger is owned by tagger_owner.cpp.
#include "kvfdpd/daemon/ctl/daemon.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "common/log.hpp"
#include "nvme/stripe.hpp"
#include "placement/config.hpp"
#include "kvfdpd/daemon/policy_table.hpp"
#include "kvfdpd/daemon/ctl/control_handlers.hpp"
#include "kvfdpd/daemon/ctl/daemon_metrics.hpp"
#include "kvfdpd/daemon/ctl/daemon_state.hpp"
#include "proto/health.hpp"
#include "kvfdpd/daemon/ctl/http_metrics.hpp"
#include "kvfdpd/daemon/ctl/notify.hpp"
#include "kvfdpd/daemon/ctl/ns_claim.hpp"
#include "kvfdpd/daemon/ctl/start_steps.hpp"
#include "kvfdpd/daemon/ctl/stop_choice.hpp"
#include "kvfdpd/daemon/ctl/ublk_device.hpp"
#include "kvfdpd/ublk/ctrl.hpp"

namespace kvfdp::daemon {

using proto::kDaemonExitConfig;
using proto::kDaemonExitRuntime;
using proto::kDaemonExitUsage;

namespace {

Error fail(const std::string &msg)
{
	return placement::plain_error(msg);
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
Result<void> top_level_keys(State &s, const placement::PolicyConfig &cfg)
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
		if (auto p = placement::make_policy(*cfg, *nruh); !p)
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

// Every check that can be made before anything is made: the command line (kDaemonExitUsage), then
// the config and --ready-file (kDaemonExitConfig). 0: go on.
int validate(State &s)
{
	if (s.opts.depth == 0 || s.opts.depth > ublk::kMaxQueueDepth) {
		log::error("--depth must be 1..%u", ublk::kMaxQueueDepth);
		return kDaemonExitUsage;
	}
	if (static_cast<uint32_t>(s.opts.queues) * s.opts.depth > KVFDP_MAX_SLOTS) {
		log::error(
			"--queues x --depth = %u exceeds the tagger's %u slots; lower one of them",
			static_cast<unsigned>(s.opts.queues) * s.opts.depth, KVFDP_MAX_SLOTS);
		return kDaemonExitUsage;
	}
	if (s.opts.keep && s.opts.force_remove) {
		log::error("--keep and --force-remove contradict each other: give one");
		return kDaemonExitUsage;
	}
	if (s.opts.io_buf_bytes < 4096 || s.opts.io_buf_bytes % 4096) {
		log::error("--io-buf must be a multiple of 4096 bytes");
		return kDaemonExitUsage;
	}
	if (s.opts.attach && (s.opts.dev_id < 0 || s.opts.recover_id >= 0)) {
		log::error(
			"--attach needs --dev-id N (and no --recover): it re-attaches to device N or creates it");
		return kDaemonExitUsage;
	}
	if (!s.opts.metrics_listen.empty())
		if (auto a = parse_listen_address(s.opts.metrics_listen); !a)
			return refuse(a.error(), kDaemonExitUsage);
	if (auto r = check_before_open(s); !r)
		return refuse(r.error(), kDaemonExitConfig);
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
			return kDaemonExitConfig;
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
		const int code =
			s.dev_added || s.recovered ? kDaemonExitRuntime : kDaemonExitConfig;
		log::error("%s", r.error().message().c_str());
		teardown(s, true);  // an added device goes; a device being recovered stays
		return code;
	}
	return 0;
}

// The device is live: the tagger watches it, the servers serve, and the log, --ready-file
// and the service manager are told. 0, or kDaemonExitConfig where require_tagger is not met.
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
		return kDaemonExitConfig;
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
// code of a refusal (kDaemonExitConfig and 1 before any ublk device exists).
int start(State &s, Serving &sv)
{
	if (auto r = bind_sockets(s, sv.http); !r)
		return refuse(r.error(), kDaemonExitConfig);
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
