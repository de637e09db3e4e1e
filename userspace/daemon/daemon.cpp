// kvfdpd lifecycle and control-request handlers.
#include "userspace/daemon/daemon.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "nvme/logs.hpp"
#include "userspace/daemon/config.hpp"
#include "userspace/daemon/control_proto.hpp"
#include "userspace/daemon/control_server.hpp"
#include "userspace/daemon/metrics.hpp"
#include "userspace/daemon/notify.hpp"
#include "userspace/daemon/queue.hpp"
#include "userspace/daemon/stop_choice.hpp"
#include "userspace/ublk/ctrl.hpp"

#if KVFDP_HAVE_BPF
#include "bpf/user/files.hpp"
#include "bpf/user/tagger.hpp"
#include "userspace/daemon/files_reply.hpp"
#endif

namespace kvfdp::daemon {

namespace {

using nlohmann::json;

// Everything the running daemon holds. Queue threads see only their UblkQueue and the
// PolicyTable; the control thread reads counters and the current Policy.
struct State {
	DaemonOptions opts;
	std::unique_ptr<nvme::Device> device;
	nvme::DeviceInfo info;
	std::vector<nvme::Handle> handles;  // RUH Status at start (pids)
	uint16_t nruh = 0;
	std::unique_ptr<ublk::Control> ctrl;
	ublk::CtrlDevInfo dev{};
	bool dev_added = false;
	UniqueFd char_fd;
	std::vector<std::unique_ptr<UblkQueue>> queues;
	PolicyTable table;
	std::mutex policy_mu;  // guards policy and reloads (never taken by queue threads)
	std::shared_ptr<const Policy> policy;
	uint64_t generation = 0;
	bool tagging = false;
	std::string tagging_reason;
	std::vector<std::string> tag_sources;
#if KVFDP_HAVE_BPF
	std::unique_ptr<bpf::Tagger> tagger;
	// Per-file records from the tagger's event ring: the events thread folds events in,
	// the control thread reads them; files_mu guards the table (never a queue thread).
	std::mutex files_mu;
	bpf::FileTable files;
	std::thread events_thread;
	std::atomic<bool> events_stop{false};
	std::string events_error;  // set (under files_mu) when polling the ring failed
#endif
	std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
	bool recovered = false;
	std::string state = "starting";
	std::unique_ptr<ControlServer> server;
};

Error fail(const std::string &msg) { return plain_error(msg); }

std::string hex(uint64_t v)
{
	char b[32];
	std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
	return b;
}

CounterSnapshot snapshot(const State &s)
{
	std::vector<const QueueCounters *> q;
	for (const auto &u : s.queues)
		q.push_back(&u->counters());
	return sum_counters(q);
}

std::shared_ptr<const Policy> current_policy(State &s)
{
	std::lock_guard<std::mutex> g(s.policy_mu);
	return s.policy;
}

void apply_rules_to_tagger([[maybe_unused]] State &s, [[maybe_unused]] const Policy *old_p,
			   [[maybe_unused]] const Policy &p)
{
#if KVFDP_HAVE_BPF
	if (!s.tagger)
		return;
	if (old_p)
		for (const DirRule &r : old_p->config.rules)
			(void)s.tagger->remove_dir_rule(r.path);
	for (const DirRule &r : p.config.rules) {
		auto res = s.tagger->add_dir_rule(r.path, r.cls);
		if (!res)
			log::warn("directory rule %s: %s", r.path.c_str(), res.error().message().c_str());
	}
#endif
}

// Loads the config, validates it against the device and publishes it. A bad config keeps
// the old policy; the error names the key.
Result<uint64_t> reload_policy(State &s)
{
	auto cfg = load_config(s.opts.config_path, !s.opts.config_explicit);
	if (!cfg)
		return std::move(cfg).error();
	auto p = make_policy(*cfg, s.nruh);
	if (!p)
		return std::move(p).error();
	std::lock_guard<std::mutex> g(s.policy_mu);
	p->generation = ++s.generation;
	auto np = std::make_shared<const Policy>(std::move(*p));
	apply_rules_to_tagger(s, s.policy.get(), *np);
	s.table.publish(np->handle);
	s.policy = np;
	return np->generation;
}

json class_rows(const State &s, const CounterSnapshot &c, const Policy &p, bool with_pid)
{
	json rows = json::array();
	for (unsigned i = 0; i < kNumClasses; i++) {
		json r = {{"class", class_name(i)}, {"handle", p.handle[i]}, {"writes", c.class_writes[i]},
			  {"bytes", c.class_bytes[i]}};
		if (with_pid)
			r["pid"] = p.handle[i] < s.handles.size() ? json(s.handles[p.handle[i]].pid) : json(nullptr);
		rows.push_back(r);
	}
	return rows;
}

json status_json(State &s)
{
	const CounterSnapshot c = snapshot(s);
	auto p = current_policy(s);
	utsname u{};
	uname(&u);
	const auto up = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - s.started);
	json d;
	d["daemon"] = {{"version", "0.1.0"}, {"pid", getpid()}, {"uptime_s", up.count()},
		       {"config", s.opts.config_path}, {"socket", s.opts.socket_path},
		       {"policy_generation", p->generation}};
	d["device"] = {{"ublk_id", s.dev.dev_id}, {"ublk_path", ublk::block_path(s.dev.dev_id)},
		       {"backend", s.info.backend}, {"path", s.info.path}, {"nsid", s.info.nsid},
		       {"lba_size", s.info.lba_size}, {"nlb", s.info.nlb},
		       {"size_bytes", s.info.nlb * s.info.lba_size}, {"max_transfer", s.info.max_transfer},
		       {"fdp_enabled", s.info.fdp_enabled}, {"nruh", s.nruh}, {"nrg", s.info.nrg},
		       {"ru_size", s.info.ru_size}, {"queues", s.dev.nr_hw_queues},
		       {"depth", s.dev.queue_depth}, {"volatile_cache", s.info.volatile_cache},
		       {"fua", false}};
	d["kernel"] = {{"release", u.release}, {"ublk_flags", hex(s.dev.flags)}};
	d["tagging"] = {{"active", s.tagging}, {"reason", s.tagging_reason}, {"sources", s.tag_sources},
			{"watch_dir", p->config.watch_dir}};
	d["classes"] = class_rows(s, c, *p, false);
	d["stale_tags"] = c.stale_tags;
	d["io"] = {{"reads", c.reads}, {"read_bytes", c.read_bytes}, {"writes", c.writes},
		   {"write_bytes", c.write_bytes}, {"flushes", c.flushes}, {"discards", c.discards},
		   {"discard_bytes", c.discard_bytes}, {"write_zeroes", c.write_zeroes},
		   {"write_zeroes_bytes", c.write_zeroes_bytes}, {"errors", c.errors}};
	d["recovery"] = {{"enabled", (s.dev.flags & ublk::kFlagUserRecovery) != 0},
			 {"recovered", s.recovered}, {"state", s.state}};
	return d;
}

bool ruh_json(State &s, json &out, std::string &err)
{
	if (s.nruh == 0) {
		err = "backend '" + s.info.backend + "' has no placement handles";
		return false;
	}
	// RUH Status and the counters as one pair: retry while writes land in between (a quiet
	// device gives an exact pair; a busy one the last try).
	Result<std::vector<nvme::Handle>> hs = std::vector<nvme::Handle>{};
	CounterSnapshot c;
	for (int attempt = 0; attempt < 5; attempt++) {
		const CounterSnapshot before = snapshot(s);
		hs = s.device->handles();
		if (!hs) {
			err = "reading RUH Status failed: " + hs.error().message();
			return false;
		}
		c = snapshot(s);
		if (c.writes == before.writes)
			break;
	}
	auto p = current_policy(s);
	json rows = json::array();
	for (const nvme::Handle &h : *hs) {
		json classes = json::array();
		for (unsigned i = 0; i < kNumClasses; i++)
			if (p->handle[i] == h.index)
				classes.push_back(class_name(i));
		const bool counted = h.index < kMaxHandles;
		rows.push_back({{"index", h.index}, {"pid", h.pid}, {"ruhid", h.ruhid}, {"earutr", h.earutr},
				{"ruamw", h.ruamw}, {"bytes", counted ? c.handle_bytes[h.index] : 0},
				{"writes", counted ? c.handle_writes[h.index] : 0}, {"classes", classes}});
	}
	out = {{"nruhsd", hs->size()}, {"ruhss", rows}, {"classes", class_rows(s, c, *p, true)}};
	return true;
}

json u128_json(nvme::u128 v)
{
	if (v >> 64 == 0)
		return static_cast<uint64_t>(v);
	std::string digits;
	while (v) {
		digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
		v /= 10;
	}
	return digits;
}

bool stats_json(State &s, json &out, std::string &err)
{
	auto raw = s.device->log_page(0x22);
	if (!raw) {
		err = "reading the FDP statistics log (0x22) failed: " + raw.error().message();
		return false;
	}
	auto st = nvme::parse_fdp_stats(*raw);
	if (!st) {
		err = "decoding the FDP statistics log failed: " + st.error().message();
		return false;
	}
	out = {{"hbmw", u128_json(st->hbmw)}, {"mbmw", u128_json(st->mbmw)}, {"mbe", u128_json(st->mbe)},
	       {"waf", st->hbmw ? json(nvme::to_double(st->mbmw) / nvme::to_double(st->hbmw)) : json(nullptr)}};
	return true;
}

json policy_json(State &s)
{
	auto p = current_policy(s);
	json map = json::array();
	for (unsigned i = 0; i < kNumClasses; i++)
		map.push_back({{"class", class_name(i)}, {"handle", p->handle[i]},
			       {"pid", p->handle[i] < s.handles.size() ? json(s.handles[p->handle[i]].pid) : json(nullptr)}});
	json rules = json::array();
	for (const DirRule &r : p->config.rules)
		rules.push_back({{"path", r.path}, {"class", class_name(r.cls)}});
	return {{"config", p->config.source.empty() ? s.opts.config_path + " (missing: built-in default)" : p->config.source},
		{"generation", p->generation}, {"loaded_at", p->loaded_at}, {"nruh", s.nruh}, {"map", map},
		{"rules", rules},
		{"watch", {{"disk", ublk::block_path(s.dev.dev_id)}, {"dir", p->config.watch_dir}}}};
}

MetricsInput metrics_input(State &s)
{
	MetricsInput m;
	m.counters = snapshot(s);
	auto p = current_policy(s);
	m.generation = p->generation;
	m.nruh = s.nruh;
	for (const nvme::Handle &h : s.handles)
		m.pids.push_back(h.pid);
	m.tagger_active = s.tagging;
	m.uptime_s = static_cast<uint64_t>(
		std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - s.started).count());
	return m;
}

// The `files` reply: the tagger's per-file records, or why there are none.
json files_data([[maybe_unused]] State &s, [[maybe_unused]] uint64_t limit)
{
#if KVFDP_HAVE_BPF
	if (s.tagger && s.tagging) {
		std::lock_guard<std::mutex> g(s.files_mu);
		if (!s.events_error.empty())
			return {{"available", false}, {"reason", s.events_error}, {"files", json::array()}};
		bpf::Tagger *t = s.tagger.get();
		s.files.refresh_bytes([t](uint32_t dev, uint64_t ino) { return t->inode_bytes(dev, ino); });
		return files_json(s.files, limit, realtime_minus_monotonic_ns());
	}
#endif
	return {{"available", false},
		{"reason", "the BPF tagger is not active (" + (s.tagging_reason.empty() ? std::string("no reason given") : s.tagging_reason) +
				   "): see kvfdp status"},
		{"files", json::array()}};
}

std::string handle_line(State &s, std::string_view line)
{
	Request req;
	std::string err;
	if (!parse_request(line, req, err))
		return reply_error(err);
	if (req.cmd == "status")
		return reply_ok(status_json(s));
	if (req.cmd == "ruh") {
		json d;
		return ruh_json(s, d, err) ? reply_ok(d) : reply_error(err);
	}
	if (req.cmd == "stats") {
		json d;
		return stats_json(s, d, err) ? reply_ok(d) : reply_error(err);
	}
	if (req.cmd == "policy")
		return reply_ok(policy_json(s));
	if (req.cmd == "metrics")
		return reply_ok(json{{"text", format_metrics(metrics_input(s))}});
	if (req.cmd == "files") {
		uint64_t limit = 1000;
		if (!get_positive_arg(req, "limit", limit, err))
			return reply_error(err);
		// A row is about 300 bytes: the cap keeps a reply well under the server's 1 MiB
		// queued-reply limit (docs/control.md).
		constexpr uint64_t kMaxFilesRows = 2000;
		json d = files_data(s, std::min(limit, kMaxFilesRows));
		d["limit"] = std::min(limit, kMaxFilesRows);
		return reply_ok(d);
	}
	if (req.cmd == "reload") {
		auto g = reload_policy(s);
		if (!g)
			return reply_error(g.error().message() + "; old policy kept");
		return reply_ok(json{{"generation", *g}});
	}
	return reply_error("unknown cmd '" + req.cmd.substr(0, 64) +
			   "'; known: status, ruh, files, policy, reload, stats, metrics");
}

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

Result<void> setup_tagger([[maybe_unused]] State &s)
{
	if (s.opts.no_tagger) {
		s.tagging_reason = "disabled with --no-tagger";
		return ok();
	}
#if KVFDP_HAVE_BPF
	bpf::TaggerOptions to;
	to.queues = s.dev.nr_hw_queues;
	to.depth = s.dev.queue_depth;
	auto t = bpf::Tagger::load(to);
	if (!t) {
		s.tagging_reason = t.error().message();
		log::warn("BPF tagger not loaded (%s): every write goes to the default handle", s.tagging_reason.c_str());
		return ok();
	}
	s.tagger = std::make_unique<bpf::Tagger>(std::move(*t));
	s.tagging = true;
	const bpf::ActiveSources &src = s.tagger->sources();
	if (src.bio_hint)
		s.tag_sources.push_back("bio_hint");
	if (src.page_inode)
		s.tag_sources.push_back("page_inode");
	if (src.dio_inode)
		s.tag_sources.push_back("dio_inode");
	if (src.hint_events)
		s.tag_sources.push_back("hint_events");
	if (src.create_events)
		s.tag_sources.push_back("create_events");
	if (!src.unlink_hook.empty())
		s.tag_sources.push_back("unlink=" + src.unlink_hook);
	s.tagging_reason = src.notes;
#else
	s.tagging_reason = "this kvfdpd was built without BPF (KVFDP_WITH_BPF=OFF)";
	log::warn("%s: every write goes to the default handle", s.tagging_reason.c_str());
#endif
	return ok();
}

const volatile kvfdp_tag_slot *slot_base([[maybe_unused]] State &s)
{
#if KVFDP_HAVE_BPF
	if (s.tagger)
		return s.tagger->slots().slot(0, 0);
#endif
	return nullptr;
}

// Folds the tagger's lifetime events into the per-file table until stop_events().
void start_events([[maybe_unused]] State &s)
{
#if KVFDP_HAVE_BPF
	if (!s.tagger || !s.tagging)
		return;
	s.events_thread = std::thread([&s] {
		const bpf::EventCallback on_event = [&s](const kvfdp_event &e) {
			std::lock_guard<std::mutex> g(s.files_mu);
			s.files.on_event(e);
		};
		while (!s.events_stop.load(std::memory_order_acquire)) {
			const int n = s.tagger->poll(250, on_event);
			if (n < 0 && n != -EINTR) {
				std::lock_guard<std::mutex> g(s.files_mu);
				s.events_error = std::string("reading the tagger's event ring failed: ") + std::strerror(-n) +
						 "; restart kvfdpd";
				log::warn("%s", s.events_error.c_str());
				return;
			}
		}
	});
#endif
}

void stop_events([[maybe_unused]] State &s)
{
#if KVFDP_HAVE_BPF
	s.events_stop.store(true, std::memory_order_release);
	if (s.events_thread.joinable())
		s.events_thread.join();
#endif
}

Result<void> watch_disk([[maybe_unused]] State &s)
{
#if KVFDP_HAVE_BPF
	if (!s.tagger)
		return ok();
	auto r = s.tagger->watch_disk(ublk::block_path(s.dev.dev_id), KVFDP_DISK_SLOTS);
	if (!r) {
		s.tagging = false;
		s.tagging_reason = "watching " + ublk::block_path(s.dev.dev_id) + ": " + r.error().message();
		log::warn("%s", s.tagging_reason.c_str());
	}
#endif
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
		return fail(s.info.path + " has no FDP enabled (" +
			    (s.info.fdp_supported ? "the controller supports FDP but it is off for this endurance group"
						  : "the controller does not support FDP") +
			    "): use an FDP namespace, or --backend file for no placement");
	if (s.info.fdp_enabled) {
		auto hs = s.device->handles();
		if (!hs)
			return std::move(hs).error();
		s.handles = std::move(*hs);
		if (s.handles.empty())
			return fail(s.info.path + " reports FDP enabled but RUH Status lists no handles");
		s.nruh = static_cast<uint16_t>(s.handles.size());
	}
	if (s.info.lba_size == 0 || s.info.nlb == 0 || s.info.max_transfer < s.info.lba_size)
		return fail(s.info.path + ": the device reports no usable size or transfer limit");
	return ok();
}

Result<void> create_queues(State &s)
{
	EngineConfig ec;
	ec.depth = s.dev.queue_depth;
	ec.io_buf_bytes = s.dev.max_io_buf_bytes;
	ec.lba_size = s.info.lba_size;
	ec.max_transfer = s.info.max_transfer;
	ec.nlb = s.info.nlb;
	ec.nruh = s.nruh;
	ec.fixed_buffers = s.opts.fixed_buffers;
	uint32_t fixed_bytes = 0;
	if (ec.fixed_buffers) {
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
			log::info("requests of up to %u bytes would need more than max_segments (%u) pages of a registered "
				  "buffer, which Linux 6.1 refuses: using unregistered buffers",
				  max_request, s.info.max_segments);
		}
	}
	for (uint16_t q = 0; q < s.dev.nr_hw_queues; q++) {
		QueueSetup qs;
		qs.q_id = q;
		qs.char_fd = s.char_fd.get();
		qs.device = s.device.get();
		qs.slots = slot_base(s);
		qs.policy = &s.table;
		qs.engine = ec;
		qs.fixed_buf_bytes = fixed_bytes;
		auto uq = UblkQueue::create(qs);
		if (!uq)
			return std::move(uq).error();
		s.queues.push_back(std::move(*uq));
	}
	for (auto &q : s.queues)
		q->start();
	for (auto &q : s.queues)
		while (!q->fetched())
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
	for (auto &q : s.queues)
		if (q->exit_status())
			return errno_error(q->exit_status(), "queue FETCH_REQ");
	return ok();
}

Result<void> add_device(State &s)
{
	ublk::DevSpec spec;
	spec.queues = s.opts.queues;
	spec.depth = s.opts.depth;
	spec.io_buf_bytes = s.opts.io_buf_bytes;
	spec.dev_id = s.opts.dev_id;
	auto info = s.ctrl->add_dev(spec);
	if (!info)
		return std::move(info).error();
	s.dev = *info;
	s.dev_added = true;
	ublk::ParamInput pi;
	pi.lba_size = s.info.lba_size;
	pi.nlb = s.info.nlb;
	pi.max_transfer = s.info.max_transfer;
	pi.io_buf_bytes = s.dev.max_io_buf_bytes;
	pi.volatile_cache = s.info.volatile_cache;
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
		return fail("ublk device " + std::to_string(id) + " not found (" + info.error().message() +
			    "): nothing to recover; start without --recover");
	s.dev = *info;
	if (!(s.dev.flags & ublk::kFlagUserRecovery))
		return fail("ublk device " + std::to_string(id) + " was created without user recovery; it cannot be re-attached");
	auto params = s.ctrl->get_params(id);
	if (params && params->basic.dev_sectors != s.info.nlb * (s.info.lba_size >> 9))
		return fail("ublk device " + std::to_string(id) + " has " + std::to_string(params->basic.dev_sectors) +
			    " sectors but " + s.info.path + " has " + std::to_string(s.info.nlb * (s.info.lba_size >> 9)) +
			    ": recover it with the namespace it was created on");
	// The old server's queues are torn down asynchronously after it died: -EBUSY until then.
	int ret = -EBUSY;
	for (int i = 0; i < 300 && ret == -EBUSY; i++) {
		ret = s.ctrl->start_user_recovery(id);
		if (ret == -EBUSY)
			std::this_thread::sleep_for(std::chrono::milliseconds(100));
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
		return fail("ublk device " + std::to_string(id) +
			    " exists without user recovery (not left by kvfdpd): delete it or pick another --dev-id");
	if (info->state == ublk::kDevLive && info->ublksrv_pid > 0 && info->ublksrv_pid != getpid() &&
	    ::kill(info->ublksrv_pid, 0) == 0)
		return fail("ublk device " + std::to_string(id) + " is served by pid " + std::to_string(info->ublksrv_pid) +
			    " (another kvfdpd?): stop it first or pick another --dev-id");
	log::info("ublk device %u was left by a stopped kvfdpd: re-attaching (recovery)", id);
	s.opts.recover_id = static_cast<int>(id);
	return ok();
}

// Stops serving. remove: STOP_DEV and DEL_DEV the device; else it stays, its I/O held by
// the driver (user recovery) for the next kvfdpd. claim (an exclusive open of the disk that
// keeps it from being mounted meanwhile) is closed after STOP_DEV: DEL_DEV waits for it.
void teardown(State &s, bool remove, UniqueFd *claim = nullptr)
{
	if (s.server)
		s.server->stop();
	stop_events(s);
	if (remove && s.dev_added) {
		auto r = s.ctrl->stop_dev(s.dev.dev_id);
		if (!r)
			log::warn("%s", r.error().message().c_str());
	}
	if (claim)
		claim->reset();
	for (auto &q : s.queues)
		q->stop();
	for (auto &q : s.queues)
		q->join();
	s.queues.clear();
	s.char_fd.reset();
	if (remove && s.dev_added) {
		auto r = s.ctrl->del_dev(s.dev.dev_id);
		if (!r)
			log::warn("%s", r.error().message().c_str());
		s.dev_added = false;
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
	const std::string reattach = "the next kvfdpd to re-attach (--dev-id " + id + " --attach, or --recover " + id + ")";
	if (s.opts.keep) {
		log::info("%s kept for %s", bdev.c_str(), reattach.c_str());
	} else if (!remove) {
		const std::string what = use.held == Held::yes ? " is in use (" + use.why + ")"
							       : ": cannot tell whether it is in use (" + use.why + ")";
		log::warn("%s%s: leaving it, I/O held, for %s; unmount it first to remove it", bdev.c_str(), what.c_str(),
			  reattach.c_str());
	} else if (use.held != Held::no) {
		log::warn("%s is in use (%s) but --force-remove: removing it (its users get I/O errors; kvfdpd "
			  "exits once it is unmounted)", bdev.c_str(),
			  use.why.c_str());
	} else {
		log::info("%s draining and removing", bdev.c_str());
	}
	send_notify(stopping_message(remove ? "draining and removing " + bdev : "stopping, " + bdev + " left for " + reattach));
	teardown(s, remove, &use.claim);
}

int run(State &s)
{
	if (s.opts.queues == 0 || s.opts.depth == 0 || s.opts.depth > ublk::kMaxQueueDepth) {
		log::error("--queues and --depth must be at least 1 (depth at most %u)", ublk::kMaxQueueDepth);
		return 1;
	}
	if (static_cast<uint32_t>(s.opts.queues) * s.opts.depth > KVFDP_MAX_SLOTS) {
		log::error("--queues x --depth = %u exceeds the tagger's %u slots; lower one of them",
			   static_cast<unsigned>(s.opts.queues) * s.opts.depth, KVFDP_MAX_SLOTS);
		return 1;
	}
	if (s.opts.keep && s.opts.force_remove) {
		log::error("--keep and --force-remove contradict each other: give one");
		return 1;
	}
	if (s.opts.io_buf_bytes < 4096 || s.opts.io_buf_bytes % 4096) {
		log::error("--io-buf must be a multiple of 4096 bytes");
		return 1;
	}
	if (auto r = open_device(s); !r) {
		log::error("%s", r.error().message().c_str());
		return 1;
	}
	if (auto g = reload_policy(s); !g) {
		log::error("%s", g.error().message().c_str());
		return 1;
	}
	auto ctrl = ublk::Control::open();
	if (!ctrl) {
		log::error("%s", ctrl.error().message().c_str());
		return 1;
	}
	s.ctrl = std::move(*ctrl);
	if (s.opts.attach) {
		if (s.opts.dev_id < 0 || s.opts.recover_id >= 0) {
			log::error("--attach needs --dev-id N (and no --recover): it re-attaches to device N or creates it");
			return 1;
		}
		if (auto a = choose_attach(s); !a) {
			log::error("%s", a.error().message().c_str());
			return 1;
		}
	}

	Result<void> r = s.opts.recover_id >= 0 ? begin_recovery(s) : add_device(s);
	if (r)
		r = setup_tagger(s);
	if (r) {
		auto cfd = open_when_present(ublk::char_path(s.dev.dev_id), O_RDWR);
		if (cfd)
			s.char_fd = std::move(*cfd);
		else
			r = std::move(cfd).error();
	}
	if (r)
		r = create_queues(s);
	if (r) {
		const int32_t pid = static_cast<int32_t>(getpid());
		r = s.recovered ? s.ctrl->end_user_recovery(s.dev.dev_id, pid) : s.ctrl->start_dev(s.dev.dev_id, pid);
	}
	if (!r) {
		log::error("%s", r.error().message().c_str());
		const int code = s.dev_added || s.recovered ? 2 : 1;
		teardown(s, true);  // an added device goes; a device being recovered stays
		return code;
	}
	s.dev_added = true;  // a recovered device is ours to remove on SIGTERM too
	s.state = "live";
	(void)watch_disk(s);
	start_events(s);

	auto server = ControlServer::listen(s.opts.socket_path, [&s](std::string_view line) { return handle_line(s, line); });
	if (!server) {
		log::error("%s", server.error().message().c_str());
		stop_live(s);
		return 2;
	}
	s.server = std::move(*server);
	s.server->start();

	const std::string bdev = ublk::block_path(s.dev.dev_id);
	log::info("%s %s: %s backend %s, %u handles, %u queue(s) x %u, tagging %s", bdev.c_str(),
		  s.recovered ? "recovered" : "ready", s.info.backend.c_str(), s.info.path.c_str(), s.nruh,
		  s.dev.nr_hw_queues, s.dev.queue_depth, s.tagging ? "on" : "off");
	if (!s.opts.ready_file.empty()) {
		const std::string tmp = s.opts.ready_file + ".tmp";
		if (FILE *f = std::fopen(tmp.c_str(), "w")) {
			std::fprintf(f, "%s %u\n", bdev.c_str(), s.dev.dev_id);
			std::fclose(f);
			std::rename(tmp.c_str(), s.opts.ready_file.c_str());
		}
	}
	send_notify(ready_message("serving " + bdev));

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			send_notify(reloading_message(monotonic_usec()));
			auto g = reload_policy(s);
			if (g)
				log::info("policy reloaded (generation %llu)", static_cast<unsigned long long>(*g));
			else
				log::error("%s; old policy kept", g.error().message().c_str());
			send_notify(ready_message(g ? "serving " + bdev + ", policy generation " + std::to_string(*g)
						    : "serving " + bdev + ", reload refused (old policy kept)"));
			continue;
		}
		break;
	}
	stop_live(s);
	if (!s.opts.ready_file.empty())
		::unlink(s.opts.ready_file.c_str());
	return 0;
}

} // namespace

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

} // namespace kvfdp::daemon
