// kvfdpd's control-socket requests (docs/control.md): status, ruh, stats, policy, metrics,
// files, twin_window, reload and stop, each answered as one JSON line from the running
// daemon's State, each within proto::kMaxReplyBytes (files by its row cap, twin_window by pages,
// policy and metrics cut to fit).
#include "kvfdpd/daemon/ctl/control_handlers.hpp"

#include <algorithm>
#include <vector>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <sys/utsname.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "kvfdp_build.hpp"
#include "nvme/logs.hpp"
#include "proto/control.hpp"
#include "proto/files_reply.hpp"
#include "proto/policy_reply.hpp"
#include "proto/twin_window.hpp"
#include "kvfdpd/daemon/ctl/control_proto.hpp"
#include "kvfdpd/daemon/writers.hpp"
#include "kvfdpd/daemon/ctl/daemon_metrics.hpp"
#include "proto/health.hpp"
#include "kvfdpd/daemon/ctl/member_view.hpp"
#include "kvfdpd/daemon/ctl/stop_choice.hpp"
#include "model/twin/report.hpp"
#include "kvfdpd/ublk/features.hpp"

namespace kvfdp::daemon {

namespace {

using nlohmann::json;

std::string hex(uint64_t v)
{
	char b[32];
	std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
	return b;
}

std::vector<proto::ClassRow> class_rows(const State &s, const proto::CounterSnapshot &c,
					const placement::Policy &p, bool with_pid)
{
	std::vector<proto::ClassRow> rows;
	for (unsigned i = 0; i < placement::kNumClasses; i++) {
		proto::ClassRow r{placement::class_name(i), p.handle[i], c.class_writes[i],
				  c.class_bytes[i],         with_pid,    {}};
		if (with_pid && p.handle[i] < s.handles.size())
			r.pid = s.handles[p.handle[i]].pid;
		rows.push_back(std::move(r));
	}
	return rows;
}

proto::StatusReply status_reply(State &s)
{
	const proto::CounterSnapshot c = snapshot(s);
	auto p = current_policy(s);
	utsname u{};
	uname(&u);
	const auto up = std::chrono::duration_cast<std::chrono::seconds>(
		std::chrono::steady_clock::now() - s.started);
	proto::StatusReply d;
	d.daemon = {KVFDP_VERSION,      getpid(),      up.count(),   s.opts.config_path,
		    s.opts.socket_path, p->generation, std::nullopt, ""};
	d.device = {s.dev.dev_id,
		    ublk::block_path(s.dev.dev_id),
		    s.info.backend,
		    s.info.path,
		    s.info.nsid,
		    s.info.lba_size,
		    s.info.nlb,
		    s.info.nlb * s.info.lba_size,
		    s.info.max_transfer,
		    s.info.fdp_enabled,
		    s.nruh,
		    s.info.nrg,
		    s.info.ru_size,
		    s.dev.nr_hw_queues,
		    s.dev.queue_depth,
		    s.info.volatile_cache,
		    false,
		    std::nullopt};
	if (const nvme::StripeDevice *sd = nvme::as_stripe(*s.device))
		d.device.stripe = stripe_status(*sd);
	d.kernel = {u.release, hex(s.dev.flags), ublk::feature_names(s.dev.flags), s.ublk_note};
	d.tagging = {s.tagger.active(),    s.tagger.reason(),   s.tagger.sources(),
		     s.tagger.pinned_at(), s.tagger.reopened(), p->config.watch_dir};
	d.health = proto::health_of(s.tagger.active(),
				    s.tagger.reason());  // DEGRADED: placing nothing
	d.classes = class_rows(s, c, *p, false);
	d.stale_tags = c.stale_tags;
	d.io = {c.reads,       c.read_bytes,    c.writes,       c.write_bytes,        c.flushes,
		c.discards,    c.discard_bytes, c.write_zeroes, c.write_zeroes_bytes, c.errors,
		c.copied_bytes};
	d.data_path = proto::StatusDataPath{ublk::data_mode_name(s.data_mode), s.data_note};
	d.recovery = {(s.dev.flags & ublk::kFlagUserRecovery) != 0, s.recovered, s.state};
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
	// A stripe's members are read inside the same pair: each member's own RUH Status and
	// kvfdpd's bytes per handle there.
	const nvme::StripeDevice *sd = nvme::as_stripe(*s.device);
	Result<std::vector<nvme::Handle>> hs = std::vector<nvme::Handle>{};
	Result<std::vector<proto::RuhMember>> members = std::vector<proto::RuhMember>{};
	proto::CounterSnapshot c;
	for (int attempt = 0; attempt < 5; attempt++) {
		const proto::CounterSnapshot before = snapshot(s);
		hs = s.device->handles();
		if (!hs) {
			err = "reading RUH Status failed: " + hs.error().message();
			return false;
		}
		c = snapshot(s);
		if (sd) {
			members = members_ruh(*sd, c);
			if (!members) {
				err = members.error().message();
				return false;
			}
		}
		if (c.writes == before.writes)
			break;
	}
	auto p = current_policy(s);
	proto::RuhReply r;
	for (const nvme::Handle &h : *hs) {
		std::vector<std::string> classes;
		for (unsigned i = 0; i < placement::kNumClasses; i++)
			if (p->handle[i] == h.index)
				classes.push_back(placement::class_name(i));
		const bool counted = h.index < placement::kMaxHandles;
		r.ruhss.push_back({h.index, h.pid, h.ruhid, h.earutr, h.ruamw,
				   counted ? c.handle_bytes[h.index] : 0,
				   counted ? c.handle_writes[h.index] : 0, std::move(classes)});
	}
	r.classes = class_rows(s, c, *p, true);
	if (sd) {
		r.stripe_bytes = sd->stripe_bytes();
		r.members = std::move(*members);
	}
	out = r;
	return true;
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
	proto::StatsReply r{
		st->hbmw,     st->mbmw,     st->mbe,     proto::lifetime_waf(st->hbmw, st->mbmw),
		std::nullopt, std::nullopt, std::nullopt};
	// A stripe: the totals above are the members' sums (nvme/stripe.hpp); each member's own.
	if (const nvme::StripeDevice *sd = nvme::as_stripe(*s.device)) {
		auto ms = read_member_stats(*sd);
		if (!ms) {
			err = ms.error().message();
			return false;
		}
		r.members = members_stats(*ms);
	}
	if (s.twin)  // the live WAF twin's projection (docs/twin.md)
		r.twin = twin::report_stats(s.twin->report());
	if (s.drive_relocations)  // the drive's own, per handle (docs/twin.md, Noisy handles)
		r.drive_handles = s.drive_relocations->report(*s.device, snapshot(s));
	out = r;
	return true;
}

proto::PolicyReply policy_reply(State &s)
{
	auto p = current_policy(s);
	proto::PolicyReply d;
	d.config = p->config.source.empty() ? s.opts.config_path + " (missing: built-in default)"
					    : p->config.source;
	d.generation = p->generation;
	d.loaded_at = p->loaded_at;
	d.nruh = s.nruh;
	for (unsigned i = 0; i < placement::kNumClasses; i++) {
		proto::PolicyMapRow m{placement::class_name(i), p->handle[i], std::nullopt,
				      std::nullopt};
		if (p->handle[i] < s.handles.size())
			m.pid = s.handles[p->handle[i]].pid;
		d.map.push_back(std::move(m));
	}
	for (const placement::DirRule &r : p->config.rules)
		d.rules.push_back({r.path, placement::class_name(r.cls), std::nullopt});
	d.writers.emplace();
	for (size_t i = 0; i < p->config.writers.size(); i++) {
		const placement::WriterRule &w = p->config.writers[i];
		proto::PolicyWriter pw{s.tagger.writer_names().name_of(named_writer_id(i)),
				       {},
				       {},
				       placement::fixed_handle(w, *p)};
		if (!w.cgroup.empty())
			pw.cgroup = w.cgroup;
		if (!w.dir.empty())
			pw.dir = w.dir;
		d.writers->push_back(std::move(pw));
	}
	d.placement = s.learned ? "learned" : "class";
	d.watch = {ublk::block_path(s.dev.dev_id), p->config.watch_dir};
	if (s.learned)
		d.learned = s.learned->policy(s.tagger.writer_names());
	return d;
}

// What a reply's data may take of proto::kMaxReplyBytes: the rest is the envelope, and the
// escapes JSON adds to text (a metric line's quotes and newline).
constexpr size_t kReplyDataBudget = proto::kMaxReplyBytes / 4 * 3;

// The policy reply within kReplyDataBudget: the learned keys that write least are left out
// (a new writer and the groups' keys stay; learned.key_count still counts them all;
// docs/control.md, policy).
json bounded_policy(State &s)
{
	proto::PolicyReply d = policy_reply(s);
	json j = d;
	size_t size = j.dump().size();
	if (size <= kReplyDataBudget || !d.learned)
		return j;
	const std::vector<proto::LearnedKey> &keys = d.learned->keys;
	std::vector<size_t> order(keys.size());
	for (size_t i = 0; i < order.size(); i++)
		order[i] = i;
	std::stable_sort(order.begin(), order.end(), [&keys](size_t a, size_t b) {
		return keys[a].write_share < keys[b].write_share;
	});
	std::vector<bool> drop(keys.size(), false);
	json &out = j["learned"]["keys"];
	for (size_t k = 0; k < order.size() && size > kReplyDataBudget; k++) {
		size -= out[order[k]].dump().size() + 1;
		drop[order[k]] = true;
	}
	json kept = json::array();
	for (size_t i = 0; i < keys.size(); i++)
		if (!drop[i])
			kept.push_back(std::move(out[i]));
	out = std::move(kept);
	return j;
}

// The exposition within kReplyDataBudget: cut at a line, and a last comment line says so
// (GET /metrics has every series; docs/control.md, metrics).
std::string bounded_metrics(State &s)
{
	std::string text = metrics_exposition(s);
	if (text.size() <= kReplyDataBudget)
		return text;
	const size_t total = text.size();
	const size_t cut = text.rfind('\n', kReplyDataBudget - 256);
	text.resize(cut == std::string::npos ? 0 : cut + 1);
	text += "# kvfdp: the control socket's reply is bounded: " +
		std::to_string(total - text.size()) +
		" bytes of series left out; GET /metrics (kvfdpd --metrics-listen) serves them all\n";
	return text;
}

// stop: refused while something holds the disk (one line naming it), unless "force": true;
// else kvfdpd stops as on SIGTERM, which the main thread takes once this reply is queued.
std::string stop_reply(State &s, const Request &req)
{
	proto::StopRequest r;
	std::string err;
	if (!proto::parse_stop_request(req.args, r, err))
		return reply_error(err);
	const bool force = r.force;
	const std::string bdev = ublk::block_path(s.dev.dev_id);
	if (!force)
		if (const std::string holder = disk_holder(disk_lookup(bdev)); !holder.empty())
			return reply_error(stop_refusal(bdev, holder));
	::kill(::getpid(), SIGTERM);
	return reply_ok(proto::StopReply{bdev, force, (s.dev.flags & ublk::kFlagSafeStopDev) != 0});
}

// A page of the twin's recent window for `kvfdp advise --twin` (docs/advise.md): at most
// proto::kTwinWindowPage records from the request's "from"; refused without a twin.
std::string twin_window_reply(const State &s, const Request &req)
{
	proto::TwinWindowRequest r;
	std::string err;
	if (!proto::parse_twin_window_request(req.args, r, err))
		return reply_error(err);
	if (!s.twin)
		return reply_error(
			"kvfdpd runs no WAF twin (no FDP placement, or --twin-memory 0), so it has no window to "
			"advise from: restart kvfdpd on an FDP namespace without --twin-memory 0, or record a "
			"trace (kvfdp record) and run kvfdp advise --blk-trace FILE");
	return reply_ok(s.twin->window(r.from.value_or(0), r.max));
}

}  // namespace

std::string handle_control_line(State &s, std::string_view line)
{
	Request req;
	std::string err;
	if (!parse_request(line, req, err))
		return reply_error(err);
	if (req.cmd == proto::cmd::kStatus)
		return reply_ok(status_reply(s));
	if (req.cmd == proto::cmd::kRuh) {
		json d;
		return ruh_json(s, d, err) ? reply_ok(d) : reply_error(err);
	}
	if (req.cmd == proto::cmd::kStats) {
		json d;
		return stats_json(s, d, err) ? reply_ok(d) : reply_error(err);
	}
	if (req.cmd == proto::cmd::kPolicy)
		return reply_ok(bounded_policy(s));
	if (req.cmd == proto::cmd::kMetrics)
		return reply_ok(proto::MetricsReply{bounded_metrics(s)});
	if (req.cmd == proto::cmd::kFiles) {
		proto::FilesQuery q;
		if (!proto::parse_files_query(req.args, q, err))
			return reply_error(err);
		// A row is about 300 bytes: the cap bounds a reply to about 600 KiB, the most a
		// connection holds beyond the server's 64 KiB of queued replies (docs/control.md).
		// Filtering and ranking cover every record.
		constexpr uint64_t kMaxFilesRows = 2000;
		q.limit = std::min(q.limit, kMaxFilesRows);
		auto d = proto::reply_as<proto::FilesReply>(s.tagger.files(q));
		d.limit = q.limit;
		return reply_ok(d);
	}
	if (req.cmd == proto::cmd::kReload) {
		auto g = reload_policy(s);
		if (!g)
			return reply_error(g.error().message() + "; old policy kept");
		return reply_ok(proto::ReloadReply{*g});
	}
	if (req.cmd == proto::cmd::kStop)
		return stop_reply(s, req);
	if (req.cmd == proto::cmd::kTwinWindow)
		return twin_window_reply(s, req);
	return reply_error("unknown cmd '" + req.cmd.substr(0, 64) +
			   "'; known: " + proto::known_commands());
}

}  // namespace kvfdp::daemon
