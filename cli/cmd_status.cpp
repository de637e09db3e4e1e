// kvfdp status: daemon, device, kernel features, tagging, bytes per class, stale tags,
// recovery, a noisy handle the live twin sees; without kvfdpd, the device (if named) and the
// kernel feature probe.
#include <sstream>

#include "proto/control.hpp"
#include "proto/health.hpp"
#include "proto/noisy_handle.hpp"
#include "cli/subcommands.hpp"
#include "cli/fdp_view.hpp"
#include "cli/kernel_probe.hpp"
#include "cli/source.hpp"
#include "cli/table.hpp"
#include "cli/units.hpp"

namespace kvfdp::cli {

namespace {

using nlohmann::json;

// j[key] as text for display ("-" when missing).
std::string text(const json &j, const char *key)
{
	if (!j.is_object() || !j.contains(key) || j[key].is_null())
		return "-";
	const auto &v = j[key];
	if (v.is_string())
		return v.get<std::string>();
	if (v.is_boolean())
		return v.get<bool>() ? "yes" : "no";
	return v.dump();
}

std::string kernel_line(const json &k)
{
	std::ostringstream s;
	s << text(k, "release") << "; ublk_drv " << text(k, "ublk_drv") << "; BTF "
	  << text(k, "btf") << "; BPF LSM " << text(k, "bpf_lsm") << "; io_uring "
	  << text(k, "io_uring");
	return s.str();
}

// The ublk feature flags the disk was created with, and the 7.x ones the driver lacks.
std::string ublk_features_line(const proto::StatusKernel &k)
{
	std::string line;
	for (const std::string &f : k.ublk_features.value_or(std::vector<std::string>{}))
		line += (line.empty() ? "" : ", ") + f;
	if (line.empty())
		line = "none";
	if (!k.ublk_note.empty())
		line += " (" + k.ublk_note + ")";
	return line;
}

std::string ublk_hint(const json &k)
{
	std::string u = text(k, "ublk_drv");
	if (u == "available")
		return "ublk_drv is not loaded: run `modprobe ublk_drv` before starting kvfdpd";
	if (u == "missing")
		return "this kernel has no ublk_drv; kvfdpd needs a kernel that ships it (Debian's "
		       "6.12 or later)";
	return {};
}

std::string device_line(const json &d)
{
	std::ostringstream s;
	if (d.contains("ublk_path"))
		s << text(d, "ublk_path") << " -> ";
	s << text(d, "path") << " (" << text(d, "backend") << "), ";
	// A stripe has no namespace of its own: each member line gives its nsid.
	if (!(d.contains("stripe") && d["stripe"].is_object()))
		s << "nsid " << text(d, "nsid") << ", ";
	s << format_bytes(static_cast<u128>(json_u64(d, "nlb")) * json_u64(d, "lba_size"))
	  << ", LBA " << json_u64(d, "lba_size") << " B";
	return s.str();
}

std::string fdp_line(const json &d)
{
	std::ostringstream s;
	bool supported = !d.contains("fdp_supported") || d["fdp_supported"] == true;
	if (!supported)
		return "not supported (CTRATT bit 19 is 0)";
	s << (d.value("fdp_enabled", false) ? "enabled" : "disabled") << ", " << json_u64(d, "nruh")
	  << " handles, " << json_u64(d, "nrg") << " reclaim group(s), RU "
	  << format_bytes(json_u64(d, "ru_size"));
	return s.str();
}

// The stripe's geometry and one line per member namespace.
void add_stripe_lines(KeyValues &kv, const proto::StripeStatus &sp, uint32_t lba_size)
{
	kv.add("stripe", std::to_string(sp.members) + " members, stripe size " +
				 format_bytes(sp.stripe_bytes) + ", " +
				 format_bytes(static_cast<u128>(sp.member_nlb) * lba_size) +
				 " used on each");
	for (const proto::StripeDeviceRow &m : sp.devices)
		kv.add("member " + std::to_string(m.member),
		       m.path + ", nsid " + std::to_string(m.nsid) + ", " +
			       format_bytes(static_cast<u128>(m.nlb) * m.lba_size) + ", " +
			       std::to_string(m.nruh) + " handles, FDP " +
			       (m.fdp_enabled ? "enabled" : "disabled"));
	if (!sp.note.empty())
		kv.add("stripe note", sp.note);
}

std::string tagging_line(const proto::StatusTagging &tg)
{
	if (!tg.active)
		return "INACTIVE (" + (tg.reason.empty() ? std::string("-") : tg.reason) +
		       "); every write goes to the default handle";
	std::string src;
	for (const std::string &s : tg.sources)
		src += (src.empty() ? "" : ", ") + s;
	std::string line = "active, sources " + (src.empty() ? std::string("none") : src);
	if (!tg.watch_dir.empty())
		line += "; watching " + tg.watch_dir;
	return line;
}

// d: kvfdpd's status reply with the local kernel probe merged into "kernel".
void print_daemon_human(CommandContext &ctx, const json &d)
{
	// The first line, only when kvfdpd serves but places nothing (docs/cli.md, status).
	if (const proto::Health h = proto::health_from_status(d); h.degraded)
		ctx.out << "DEGRADED: " << h.why << '\n';
	const auto st = proto::reply_as<proto::StatusReply>(d);
	KeyValues kv;
	const proto::StatusDaemon &dm = st.daemon;
	std::ostringstream daemon;
	daemon << "kvfdpd " << dm.version << ", pid " << dm.pid << ", up " << dm.uptime_s
	       << " s, config " << dm.config << " (generation " << dm.policy_generation << ")";
	kv.add("daemon", daemon.str());
	const json &dev = d.value("device", json::object());
	kv.add("device", device_line(dev));
	kv.add("fdp", fdp_line(dev));
	if (st.device.stripe)
		add_stripe_lines(kv, *st.device.stripe, st.device.lba_size);
	kv.add("kernel", kernel_line(d.value("kernel", json::object())));
	if (st.kernel.ublk_features)
		kv.add("ublk features", ublk_features_line(st.kernel));
	kv.add("tagging", tagging_line(st.tagging));
	kv.add("stale tags", std::to_string(st.stale_tags));
	if (st.data_path) {
		const std::string &mode = st.data_path->mode;
		std::string line =
			mode == "zero-copy"
				? "zero copy: requests go to the device from their own pages "
				  "(UBLK_F_AUTO_BUF_REG)"
			: mode == "zero-copy-register"
				? "zero copy: requests go to the device from their own pages, registered per "
				  "request (UBLK_F_SUPPORT_ZERO_COPY)"
				: "copy: each request is copied through kvfdpd's buffers";
		if (!st.data_path->note.empty())
			line += " (" + st.data_path->note + ")";
		kv.add("data path", line);
	}
	const proto::StatusRecovery &rc = st.recovery;
	kv.add("recovery", (rc.state.empty() ? std::string("-") : rc.state) +
				   (rc.enabled ? " (user recovery on" : " (user recovery off") +
				   (rc.recovered ? ", re-attached)" : ")"));
	const proto::StatusIo &io = st.io;
	std::ostringstream ios;
	ios << io.writes << " writes (" << format_bytes(io.write_bytes) << "), " << io.reads
	    << " reads (" << format_bytes(io.read_bytes) << "), " << io.flushes << " flushes, "
	    << io.discards << " discards (" << format_bytes(io.discard_bytes) << "), " << io.errors
	    << " errors";
	if (io.copied_bytes)
		ios << ", " << format_bytes(*io.copied_bytes) << " copied";
	kv.add("io", "since start, " + ios.str());
	kv.render(ctx.out, ctx.table_width());
	if (!st.classes.empty()) {
		ctx.out << "\nper lifetime class, since kvfdpd started:\n";
		Table t({{"CLASS"},
			 {"HANDLE", Align::right},
			 {"WRITES", Align::right},
			 {"BYTES", Align::right}});
		for (const proto::ClassRow &c : st.classes)
			t.add_row({c.cls, std::to_string(c.handle), std::to_string(c.writes),
				   format_bytes(c.bytes)});
		t.render(ctx.out, ctx.table_width());
	}
	if (const auto it = d.find(proto::kNoisyHandleKey); it != d.end() && it->is_object())
		ctx.out << "warning: " << it->value("warning", std::string()) << '\n';
}

// A noisy handle (docs/twin.md, Noisy handles) into d: kvfdpd's stats reply gives the
// per-handle relocations the drive reports (its FDP events log), tried first, and the live
// twin's. Nothing without either, or when the stats request fails (status reports what it has).
void add_noisy_handle(CommandContext &ctx, json &d)
{
	const auto stats = ctx.ask_daemon(proto::cmd::kStats);
	if (!stats.ok)
		return;
	const auto reply = proto::reply_as<proto::StatsReply>(stats.data);
	if (!reply.twin && !reply.drive_handles)
		return;
	const auto noisy = proto::find_noisy_handle(reply.drive_handles,
						    reply.twin ? reply.twin->handles
							       : std::vector<proto::TwinHandle>{});
	d[proto::kNoisyHandleKey] = noisy ? proto::noisy_handle_json(*noisy) : json(nullptr);
}

void print_local_human(CommandContext &ctx, const json &d, const proto::StatusDaemon &daemon)
{
	KeyValues kv;
	kv.add("daemon", "not running (" + daemon.reason + ")");
	if (d.contains("device")) {
		kv.add("device", device_line(d["device"]));
		kv.add("fdp", fdp_line(d["device"]));
	} else {
		kv.add("device", "none named (add --device /dev/ngXnY or --backend model)");
	}
	kv.add("kernel", kernel_line(d["kernel"]));
	kv.render(ctx.out, ctx.table_width());
	std::string hint = ublk_hint(d["kernel"]);
	if (!hint.empty())
		ctx.out << "note: " << hint << '\n';
	if (!d["kernel"].value("btf", false))
		ctx.out << "note: no /sys/kernel/btf/vmlinux: the BPF tagger cannot load, and kvfdpd "
			   "would place every write on the default handle\n";
}

// status's "daemon" when kvfdpd was not asked or not there: not running, and why.
proto::StatusDaemon daemon_absent(const CommandContext &ctx, const std::string &reason)
{
	proto::StatusDaemon d;
	d.socket = ctx.socket;
	d.running = false;
	d.reason = reason;
	return d;
}

int run_status(CommandContext &ctx)
{
	KernelFeatures kf = probe_kernel(ctx.probe_root);
	if (!ctx.direct()) {
		auto st = ctx.ask_daemon(proto::cmd::kStatus);
		if (st.ok) {
			json d = st.data;
			json k = to_json(kf);
			if (d.contains("kernel") && d["kernel"].is_object())
				for (auto it = d["kernel"].begin(); it != d["kernel"].end(); ++it)
					k[it.key()] = it.value();
			d["kernel"] = k;
			d["source"] = "daemon";
			d["health"] = proto::health_json(proto::health_from_status(d));
			proto::mark_daemon_running(d);
			add_noisy_handle(ctx, d);
			if (ctx.json())
				ctx.print_json(d);
			else
				print_daemon_human(ctx, d);
			return proto::kExitOk;
		}
		if (st.error.kind != DaemonFailure::unreachable || ctx.socket_given)
			return ctx.fail(st.error);
		const proto::StatusDaemon none = daemon_absent(ctx, "no kvfdpd at " + ctx.socket);
		json d = {{"source", "local"}, {"daemon", none}, {"kernel", to_json(kf)}};
		if (ctx.json())
			ctx.print_json(d);
		else
			print_local_human(ctx, d, none);
		return proto::kExitOk;
	}
	auto dev = ctx.open_device();
	if (!dev)
		return ctx.fail(dev.error());
	const proto::StatusDaemon none =
		daemon_absent(ctx, "not asked: --device/--backend reads the device directly");
	json d = {{"source", "device"},
		  {"daemon", none},
		  {"device", device_json((*dev)->info())},
		  {"kernel", to_json(kf)}};
	if (ctx.json())
		ctx.print_json(d);
	else
		print_local_human(ctx, d, none);
	if (auto e = fdp_unusable((*dev)->info()))
		ctx.err << "kvfdp: note: " << e->context << '\n';
	return proto::kExitOk;
}

}  // namespace

void add_status_command(CLI::App &app, CommandContext &ctx)
{
	add_plain_command(app, ctx, "status",
			  "kvfdpd, device, kernel features, tagging, bytes per class, stale tags, "
			  "recovery, a noisy handle",
			  "Without kvfdpd it reports the kernel feature probe (and the device with "
			  "--device or --backend model); it exits 0 either way.",
			  run_status);
}

}  // namespace kvfdp::cli
