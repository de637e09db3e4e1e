// The kvfdp command line: global options, one line per subcommand, the top-level catch.
#include "cli/app.hpp"

#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/subcommands.hpp"
#include "cli/command_context.hpp"

#include "kvfdp_build.hpp"
#include "proto/control.hpp"
#include "proto/twin_window.hpp"
#include "model/sim/cmd_advise.hpp"
#include "model/sim/cmd_simulate.hpp"
#if KVFDP_WITH_BPF
#include "cli/record/cmd_record.hpp"
#endif

namespace kvfdp::cli {

namespace {

// A failed twin_window request as advise's error.
Error twin_window_failure(const DaemonError &e)
{
	if (e.kind != DaemonFailure::unreachable)
		return guidance_error(std::errc::io_error, e.message);
	// The client's hint names --device, which advise does not take.
	const std::string m = e.message.substr(0, e.message.find("; "));
	return guidance_error(std::errc::no_such_device,
			      m + "; is kvfdpd running? give its --socket, or advise on a recorded "
				  "trace (--blk-trace FILE)");
}

// `kvfdp advise --twin` asks kvfdpd at --socket for its twin's window (kvfdp_sim has no client).
sim::TwinWindowClient twin_window_client(CommandContext &ctx)
{
	return {[&ctx] { return ctx.socket_given; },
		[&ctx]() -> Result<proto::TwinWindow> {
			proto::TwinWindow w;
			DaemonError e;
			const bool ok = fetch_twin_window(
				[&ctx](const proto::TwinWindowRequest &req) {
					return ctx.ask_daemon(proto::cmd::kTwinWindow, req);
				},
				w, e);
			if (!ok)
				return twin_window_failure(e);
			return w;
		}};
}

int run_app(int argc, char **argv, std::ostream &out, std::ostream &err,
	    const std::function<void(CommandContext &)> &setup)
{
	CLI::App app{"kvfdp: inspect and project NVMe FDP placement of KV-cache files.\n"
		     "Data comes from kvfdpd's control socket, or with --device / --backend model "
		     "straight from a namespace or the FDP SSD model.",
		     "kvfdp"};
	CommandContext ctx(out, err);
	if (setup)
		setup(ctx);
	app.require_subcommand(1);
	// `kvfdp --version` prints what `kvfdp version` does (kvfdp_build.hpp's KVFDP_VERSION).
	app.set_version_flag("--version", std::string("kvfdp ") + KVFDP_VERSION,
			     "print the kvfdp version and exit");
	// Global options may follow the subcommand: `kvfdp ruh --device /dev/ng0n1 -o json`.
	app.fallthrough();
	app.footer("Exit codes: 0 ok, 1 error, 2 usage, 3 no daemon/device, 4 unsupported "
		   "(docs/cli.md).");
	add_global_options(app, ctx);

	add_status_command(app, ctx);
	add_ruh_command(app, ctx);
	add_stats_command(app, ctx);
	add_configs_command(app, ctx);
	add_events_command(app, ctx);
	add_files_command(app, ctx);
	add_policy_command(app, ctx);
	add_metrics_command(app, ctx);
	add_stop_command(app, ctx);
	add_version_command(app, ctx);
	kvfdp::sim::add_simulate_command(app, ctx.exit_code);
	kvfdp::sim::add_advise_command(app, ctx.exit_code, {}, twin_window_client(ctx));
#if KVFDP_WITH_BPF
	kvfdp::bpf::add_record_command(app, ctx.exit_code);
#endif

	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
			return app.exit(e, out, err) == 0 ? proto::kExitOk : proto::kExitUsage;
		// One line, saying what to do next.
		std::vector<std::string> rest = app.remaining();
		if (app.get_subcommands().empty() && !rest.empty() &&
		    rest.front().rfind("-", 0) != 0) {
			std::string known;
			for (const CLI::App *sc : app.get_subcommands({}))
				known += (known.empty() ? "" : ", ") + sc->get_name();
			err << "kvfdp: unknown subcommand '" << rest.front()
			    << "'; known: " << known << '\n';
		} else {
			err << "kvfdp: " << e.what()
			    << "; see `kvfdp --help` or `kvfdp SUBCOMMAND --help`\n";
		}
		return proto::kExitUsage;
	} catch (const std::exception &e) {
		// Data that did not have the shape we expected (e.g. a daemon reply): a bug, not a
		// crash.
		err << "kvfdp: internal error: " << e.what()
		    << "; please report it with the command line that caused it\n";
		return proto::kExitError;
	}
	return ctx.exit_code;
}

}  // namespace

int run(int argc, char **argv, std::ostream &out, std::ostream &err)
{
	return run_app(argc, argv, out, err, {});
}

int run(int argc, char **argv)
{
	return run(argc, argv, std::cout, std::cerr);
}

int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err,
	const std::function<void(CommandContext &)> &setup)
{
	std::vector<std::string> all;
	all.reserve(args.size() + 1);
	all.emplace_back("kvfdp");
	all.insert(all.end(), args.begin(), args.end());
	std::vector<char *> argv;
	for (auto &s : all)
		argv.push_back(s.data());
	argv.push_back(nullptr);
	return run_app(static_cast<int>(all.size()), argv.data(), out, err, setup);
}

}  // namespace kvfdp::cli
