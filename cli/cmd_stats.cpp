// kvfdp stats [--interval S] [--count N]: the FDP statistics log, with WAF from deltas.
#include <chrono>
#include <memory>
#include <cstdio>
#include <thread>

#include "proto/backend_kind.hpp"
#include "proto/control.hpp"
#include "cli/subcommands.hpp"
#include "cli/fdp_view.hpp"
#include "cli/source.hpp"
#include "cli/table.hpp"
#include "cli/units.hpp"
#include "nvme/waf.hpp"
#include "proto/twin_text.hpp"

namespace kvfdp::cli {

namespace {

using nlohmann::json;

struct StatsOptions {
	double interval = 0;
	unsigned count = 1;
};

// Where samples come from: an open device, or kvfdpd.
struct Sampler {
	CommandContext &ctx;
	std::unique_ptr<nvme::Device> dev;
	json last;  // kvfdpd's last stats reply (a stripe's has "members")

	Result<nvme::FdpStats> sample()
	{
		if (dev)
			return stats_from_device(*dev);
		auto r = ctx.ask_daemon(proto::cmd::kStats);
		if (!r.ok) {
			int code = r.error.kind == DaemonFailure::unreachable ? proto::kExitNoDevice
									      : proto::kExitError;
			return cli_error(code, r.error.message);
		}
		last = r.data;
		return stats_from_daemon_data(r.data);
	}
};

std::string waf_text(const nvme::WafReading &w)
{
	if (!w.waf)
		return "n/a";
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.3f", *w.waf);
	return buf;
}

json waf_json(const nvme::WafReading &w)
{
	json j;
	j["waf"] = w.waf ? json(*w.waf) : json(nullptr);
	j["waf_note"] = w.reason;
	return j;
}

json counters_json(const nvme::FdpStats &s)
{
	return {{"hbmw", proto::u128_json(s.hbmw)},
		{"mbmw", proto::u128_json(s.mbmw)},
		{"mbe", proto::u128_json(s.mbe)}};
}

// Opens the device (--device/--backend), or asks kvfdpd which one it serves; names it and
// says whether its controller is QEMU's. kExitOk, or what ctx.fail returned.
int open_sampler(CommandContext &ctx, Sampler &sm, std::string &device_name, bool &emulated)
{
	if (ctx.direct()) {
		auto d = ctx.open_device();
		if (!d)
			return ctx.fail(d.error());
		sm.dev = std::move(d).value();
		device_name = display_path(sm.dev->info());
		if (proto::backend_passthru_logs(sm.dev->info().backend))
			emulated = nvme::controller_is_emulated(device_name, ctx.probe_root);
		return proto::kExitOk;
	}
	auto st = ctx.ask_daemon(proto::cmd::kStatus);
	if (!st.ok)
		return ctx.fail(st.error);
	const proto::StatusDevice dev = proto::reply_as<proto::StatusReply>(st.data).device;
	device_name = dev.path.empty() ? std::string("?") : dev.path;
	if (proto::backend_passthru_logs(dev.backend))
		emulated = nvme::controller_is_emulated(device_name, ctx.probe_root);
	return proto::kExitOk;
}

// The first reading's counters and lifetime WAF, as lines.
void print_lifetime(CommandContext &ctx, const nvme::FdpStats &first,
		    const std::string &device_name, bool emulated, const nvme::WafReading &life)
{
	KeyValues kv;
	kv.add("device", device_name + (emulated ? " (emulated: QEMU)" : ""));
	kv.add("hbmw", format_u128(first.hbmw) + " B (" + format_bytes(first.hbmw) +
			       ") host bytes with metadata written");
	kv.add("mbmw", format_u128(first.mbmw) + " B (" + format_bytes(first.mbmw) +
			       ") media bytes with metadata written");
	kv.add("mbe",
	       format_u128(first.mbe) + " B (" + format_bytes(first.mbe) + ") media bytes erased");
	kv.add("waf", waf_text(life) + " since the drive was formatted");
	kv.render(ctx.out, ctx.table_width());
	if (!life.reason.empty())
		ctx.out << "note: " << life.reason << '\n';
}

// What kvfdpd's reply adds: a stripe's members (the counters above are their sums), each
// with its own WAF; and its live WAF twin's projection with placement and without
// (docs/twin.md). Into doc, and printed unless -o json.
void add_daemon_parts(CommandContext &ctx, const proto::StatsReply &reply, bool emulated, json &doc)
{
	if (reply.members) {
		json members = json::array();
		if (!ctx.json())
			ctx.out << "\nper member (the totals above are their sums):\n";
		Table t({{"MEMBER", Align::right},
			 {"DEVICE"},
			 {"HOST", Align::right},
			 {"MEDIA", Align::right},
			 {"ERASED", Align::right},
			 {"WAF", Align::right}});
		for (const proto::StatsMember &m : *reply.members) {
			const nvme::FdpStats ms{m.hbmw, m.mbmw, m.mbe};
			const nvme::WafReading mw =
				nvme::assess_waf(nvme::FdpStats{}, ms, emulated);
			json mj = counters_json(ms);
			mj["member"] = m.member;
			mj["device"] = m.device;
			mj["lifetime"] = waf_json(mw);
			members.push_back(mj);
			t.add_row({std::to_string(m.member), m.device, format_bytes(ms.hbmw),
				   format_bytes(ms.mbmw), format_bytes(ms.mbe), waf_text(mw)});
		}
		doc["members"] = members;
		if (!ctx.json())
			t.render(ctx.out, ctx.table_width());
	}
	if (reply.drive_handles) {  // the drive's own relocations per handle (docs/twin.md)
		doc[proto::kDriveHandlesKey] = *reply.drive_handles;
		if (!ctx.json())
			ctx.out << proto::drive_handles_text(*reply.drive_handles);
	}
	if (reply.twin) {
		doc[proto::kTwinKey] = *reply.twin;
		if (!ctx.json())
			ctx.out << proto::twin_text(*reply.twin);
	}
}

// One interval's row: its span, bytes, WAF and note.
void print_interval_row(CommandContext &ctx, const std::string &a, const std::string &b,
			const std::string &c, const std::string &d, const std::string &e,
			const std::string &f)
{
	char buf[160];
	std::snprintf(buf, sizeof buf, "%10s  %12s  %12s  %12s  %7s", a.c_str(), b.c_str(),
		      c.c_str(), d.c_str(), e.c_str());
	std::string line = buf;
	if (!f.empty())
		line += "  " + f;
	ctx.out << line << '\n';
	ctx.out.flush();
}

// --interval: count more readings, each interval's deltas and WAF into doc["intervals"] (and
// printed as they come). kExitOk, or what ctx.fail returned.
int sample_intervals(CommandContext &ctx, const StatsOptions &o, Sampler &sm, nvme::FdpStats prev,
		     bool emulated, json &doc)
{
	if (o.interval > 0 && !ctx.json()) {
		ctx.out << "\nwritten and erased in each interval (its WAF = MEDIA / HOST):\n";
		print_interval_row(ctx, "INTERVAL_S", "HOST", "MEDIA", "ERASED", "WAF", "NOTE");
	}
	for (unsigned i = 0; o.interval > 0 && i < o.count; i++) {
		std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
		auto now = sm.sample();
		if (!now)
			return ctx.fail(now.error());
		nvme::WafReading w = nvme::assess_waf(prev, *now, emulated);
		nvme::FdpStats d{now->hbmw - prev.hbmw, now->mbmw - prev.mbmw, now->mbe - prev.mbe};
		json iv = counters_json(d);
		iv["seconds"] = o.interval;
		iv.update(waf_json(w));
		doc["intervals"].push_back(iv);
		if (!ctx.json()) {
			// The span since the first reading, e.g. "10-20": each row is one interval.
			char secs[48];
			std::snprintf(secs, sizeof secs, "%g-%g", o.interval * i,
				      o.interval * (i + 1));
			print_interval_row(ctx, secs, format_bytes(d.hbmw), format_bytes(d.mbmw),
					   format_bytes(d.mbe), waf_text(w), w.reason);
		}
		prev = *now;
	}
	return proto::kExitOk;
}

int run_stats(CommandContext &ctx, const StatsOptions &o)
{
	Sampler sm{ctx, nullptr, {}};
	std::string device_name;
	bool emulated = false;
	if (int rc = open_sampler(ctx, sm, device_name, emulated); rc != proto::kExitOk)
		return rc;
	auto first = sm.sample();
	if (!first)
		return ctx.fail(first.error());
	nvme::WafReading life = nvme::assess_waf(nvme::FdpStats{}, *first, emulated);
	json doc = counters_json(*first);
	doc["device"] = device_name;
	doc["emulated"] = emulated;
	doc["lifetime"] = waf_json(life);
	doc["intervals"] = json::array();
	if (!ctx.json())
		print_lifetime(ctx, *first, device_name, emulated, life);
	add_daemon_parts(ctx, proto::reply_as<proto::StatsReply>(sm.last), emulated, doc);
	if (int rc = sample_intervals(ctx, o, sm, *first, emulated, doc); rc != proto::kExitOk)
		return rc;
	if (ctx.json())
		ctx.print_json(doc);
	else
		ctx.out << nvme::kWafMeaning << '\n';
	return proto::kExitOk;
}

}  // namespace

void add_stats_command(CLI::App &app, CommandContext &ctx)
{
	auto o = std::make_shared<StatsOptions>();
	auto *c =
		app.add_subcommand("stats", "FDP statistics (HBMW, MBMW, MBE) and WAF from deltas");
	auto *interval = c->add_option("-i,--interval", o->interval,
				       "seconds between two readings; WAF of each interval")
				 ->check(CLI::Range(0.001, 86400.0));
	// A count without an interval would be ignored: refuse it (usage error, exit 2).
	c->add_option("-n,--count", o->count,
		      "intervals to take with --interval (needs --interval)")
		->check(CLI::Range(1u, 1000000u))
		->capture_default_str()
		->needs(interval);
	c->footer("WAF = delta MBMW / delta HBMW. Without --interval it is the lifetime ratio "
		  "since the drive was formatted.");
	c->callback([&ctx, o] { ctx.exit_code = run_stats(ctx, *o); });
}

}  // namespace kvfdp::cli
