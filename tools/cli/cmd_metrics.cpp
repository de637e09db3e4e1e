// kvfdp metrics [--textfile PATH]: Prometheus text for node_exporter's textfile collector.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "tools/cli/commands.hpp"
#include "tools/cli/metrics.hpp"
#include "tools/cli/source.hpp"

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

void append(std::string &text, const std::vector<MetricFamily> &fams)
{
	std::vector<MetricFamily> fresh;
	for (const auto &f : fams)
		if (!has_family(text, f.name))
			fresh.push_back(f);
	text += render_metrics(fresh);
}

int run_metrics(Context &ctx, const MetricsOptions &o)
{
	std::string text;
	int rc = kExitOk;
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
		bool emu = (*dev)->info().backend == "passthru" &&
			   controller_is_emulated((*dev)->info().path, ctx.probe_root);
		append(text, ruh_metrics(*ruh));
		append(text, fdp_stats_metrics(*st, emu));
	} else {
		auto m = ctx.ask_daemon("metrics");
		bool up = m.ok;
		if (!m.ok && (m.error.kind != DaemonFailure::unreachable))
			return ctx.fail(m.error);
		if (up) {
			text = m.data.value("text", std::string());
			if (!text.empty() && text.back() != '\n')
				text += '\n';
			auto st = ctx.ask_daemon("status");
			if (st.ok) {
				append(text, status_metrics(st.data));
				auto ruh = ctx.ask_daemon("ruh");
				if (ruh.ok) {
					auto v = ruh_from_daemon_data(ruh.data, st.data);
					if (v)
						append(text, ruh_metrics(*v));
				}
				auto fs = ctx.ask_daemon("stats");
				if (fs.ok) {
					auto s = stats_from_daemon_data(fs.data);
					const json &dev = st.data.value("device", json::object());
					bool emu = dev.value("backend", std::string()) == "passthru" &&
						   controller_is_emulated(dev.value("path", std::string()),
									  ctx.probe_root);
					if (s)
						append(text, fdp_stats_metrics(*s, emu));
				}
			}
		} else {
			ctx.err << "kvfdp: " << m.error.message << '\n';
			rc = kExitNoDevice;
		}
		append(text, {{"kvfdp_daemon_up", "1 when kvfdpd answered on its control socket.",
			       "gauge", {{{}, up ? "1" : "0"}}}});
	}
	if (!o.textfile.empty()) {
		auto w = write_atomic(o.textfile, text);
		if (!w)
			return ctx.fail(kExitError, w.error().message() +
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

} // namespace

void add_metrics_command(CLI::App &app, Context &ctx)
{
	auto o = std::make_shared<MetricsOptions>();
	auto *c = app.add_subcommand("metrics", "Prometheus text exposition (node_exporter textfile collector)");
	c->add_option("--textfile", o->textfile, "write atomically to this file (e.g. "
						 "/var/lib/node_exporter/textfile/kvfdp.prom) instead of stdout");
	c->footer("Metric names are listed in docs/cli.md. Without kvfdpd it still prints "
		  "kvfdp_daemon_up 0 and exits 3.");
	c->callback([&ctx, o] { ctx.exit_code = run_metrics(ctx, *o); });
}

} // namespace kvfdp::cli
