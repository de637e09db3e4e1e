// The subcommands of kvfdp, one file each: add_X_command registers X on the app and binds
// its callback to the shared CommandContext. Registering a subcommand is one line in app.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/command_context.hpp"

namespace kvfdp::cli {

// Registers subcommand name with only the global options: its help line, a footer (none
// when empty), and run as its callback; run's return value becomes the exit code.
inline CLI::App *add_plain_command(CLI::App &app, CommandContext &ctx, const std::string &name,
				   const std::string &help, const std::string &footer,
				   int (*run)(CommandContext &))
{
	CLI::App *c = app.add_subcommand(name, help);
	if (!footer.empty())
		c->footer(footer);
	c->callback([&ctx, run] { ctx.exit_code = run(ctx); });
	return c;
}

void add_version_command(CLI::App &app, CommandContext &ctx);
void add_status_command(CLI::App &app, CommandContext &ctx);
void add_ruh_command(CLI::App &app, CommandContext &ctx);
void add_stats_command(CLI::App &app, CommandContext &ctx);
void add_configs_command(CLI::App &app, CommandContext &ctx);
void add_events_command(CLI::App &app, CommandContext &ctx);
void add_files_command(CLI::App &app, CommandContext &ctx);
void add_policy_command(CLI::App &app, CommandContext &ctx);
void add_metrics_command(CLI::App &app, CommandContext &ctx);
void add_stop_command(CLI::App &app, CommandContext &ctx);

}  // namespace kvfdp::cli
