// kvfdp stop [--force]: asks kvfdpd to stop as SIGTERM does; refused, in one line naming the
// holder, while the disk is mounted, held or open, unless --force.
#include <memory>

#include "proto/control.hpp"
#include "cli/subcommands.hpp"

namespace kvfdp::cli {

namespace {

struct StopOptions {
	bool force = false;
};

int run_stop(CommandContext &ctx, const StopOptions &o)
{
	if (ctx.direct())
		return ctx.fail(proto::kExitUsage,
				"stop talks to kvfdpd (--socket), not to --device or --backend");
	auto r = ctx.ask_daemon(proto::cmd::kStop, proto::StopRequest{o.force});
	if (!r.ok)
		return ctx.fail(r.error);
	if (ctx.json()) {
		ctx.print_json(r.data);
		return proto::kExitOk;
	}
	const auto stop = proto::reply_as<proto::StopReply>(r.data);
	ctx.out << "kvfdpd is stopping "
		<< (stop.stopping.empty() ? std::string("its disk") : stop.stopping)
		<< (stop.force ? " (--force: as on SIGTERM, whoever holds the disk)" : "") << "\n";
	return proto::kExitOk;
}

}  // namespace

void add_stop_command(CLI::App &app, CommandContext &ctx)
{
	auto o = std::make_shared<StopOptions>();
	auto *c = app.add_subcommand(
		"stop",
		"stop kvfdpd and remove its disk; refused while the disk is mounted or open");
	c->add_flag(
		"--force", o->force,
		"stop even while the disk is held: as SIGTERM does (a held disk is left, I/O held, for the next "
		"kvfdpd unless kvfdpd runs with --force-remove)");
	c->footer(
		"Needs root or membership of group kvfdp-admin. Exit codes: 0 stopping, 1 refused (the "
		"line names what holds the disk, or the group needed), 3 no kvfdpd.");
	c->callback([&ctx, o] { ctx.exit_code = run_stop(ctx, *o); });
}

}  // namespace kvfdp::cli
