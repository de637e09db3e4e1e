// kvfdp metrics [--textfile PATH]: Prometheus text for node_exporter's textfile collector.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "proto/backend_kind.hpp"
#include "proto/control.hpp"
#include "cli/subcommands.hpp"
#include "cli/ruh_metrics.hpp"
#include "cli/source.hpp"

namespace kvfdp::cli {

namespace {

using nlohmann::json;

struct MetricsOptions {
	std::string textfile;
};

// Writes text to path atomically (temporary file in the same directory, then rename), as
// node_exporter's textfile collector requires.
Result<void> write_atomic(const std::string &path, const std::string &text)
{
	std::string tmp = path + ".tmp." + std::to_string(getpid());
	{
		std::ofstream f(tmp, std::ios::trunc);
		if (!f)
			return errno_error(errno, "cannot write " + tmp);
		f << text;
		f.flush();
		if (!f)
			return errno_error(errno, "cannot write " + tmp);
	}
	if (std::rename(tmp.c_str(), path.c_str()) != 0) {
		int e = errno;
		std::remove(tmp.c_str());
		return errno_error(e, "cannot rename " + tmp + " to " + path);
	}
	return ok();
}

int run_metrics(CommandContext &ctx, const MetricsOptions &o)
{
	std::string text;
	int rc = proto::kExitOk;
	if (ctx.direct()) {
		auto dev = ctx.open_device();
		if (!dev)
			return ctx.fail(dev.error());
		auto ruh = ruh_from_device(**dev);
		if (!ruh)
			return ctx.fail(ruh.error());
		auto st = stats_from_device(**dev);
		if (!st)
			return ctx.fail(st.error());
		const bool emu = proto::backend_passthru_logs((*dev)->info().backend) &&
				 nvme::controller_is_emulated((*dev)->info().path, ctx.probe_root);
		std::vector<proto::MetricFamily> fams = ruh_metrics(*ruh);
		for (auto &f : proto::fdp_stats_families(*st, emu))
			fams.push_back(std::move(f));
		text = proto::render_metrics(fams);
	} else {
		// kvfdpd's text has every family, kvfdp_daemon_up 1 included (daemon_metrics.hpp).
		auto m = ctx.ask_daemon(proto::cmd::kMetrics);
		bool up = m.ok;
		if (!m.ok && (m.error.kind != DaemonFailure::unreachable))
			return ctx.fail(m.error);
		if (up) {
			text = proto::reply_as<proto::MetricsReply>(m.data).text;
			if (!text.empty() && text.back() != '\n')
				text += '\n';
		} else {
			ctx.err << "kvfdp: " << m.error.message << '\n';
			rc = proto::kExitNoDevice;
			text = proto::render_metrics({proto::daemon_up_family(false)});
		}
	}
	if (!o.textfile.empty()) {
		auto w = write_atomic(o.textfile, text);
		if (!w)
			return ctx.fail(
				proto::kExitError,
				w.error().message() +
					"; check the textfile collector directory exists and is writable");
		if (o.textfile.size() < 5 || o.textfile.substr(o.textfile.size() - 5) != ".prom")
			ctx.err << "kvfdp: note: node_exporter reads only *.prom files\n";
	} else if (ctx.json()) {
		ctx.print_json({{"text", text}});
	} else {
		ctx.out << text;
	}
	ctx.exit_code = rc;
	return rc;
}

}  // namespace

void add_metrics_command(CLI::App &app, CommandContext &ctx)
{
	auto o = std::make_shared<MetricsOptions>();
	auto *c = app.add_subcommand(
		"metrics", "Prometheus text exposition (node_exporter textfile collector)");
	c->add_option("--textfile", o->textfile,
		      "write atomically to this file (e.g. "
		      "/var/lib/node_exporter/textfile/kvfdp.prom) instead of stdout");
	c->footer("Metric names are listed in docs/cli.md. Without kvfdpd it still prints "
		  "kvfdp_daemon_up 0 and exits 3.");
	c->callback([&ctx, o] { ctx.exit_code = run_metrics(ctx, *o); });
}

}  // namespace kvfdp::cli
