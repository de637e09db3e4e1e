// kvfdp version: the CLI's version (compare it with kvfdpd's in `kvfdp status`).
#include "tools/cli/commands.hpp"

#ifndef KVFDP_VERSION
#define KVFDP_VERSION "unknown"
#endif

namespace kvfdp::cli {

void add_version_command(CLI::App &app, Context &ctx)
{
	auto *c = app.add_subcommand("version", "print the kvfdp version");
	c->callback([&ctx] {
		if (ctx.json())
			ctx.print_json({{"version", KVFDP_VERSION}});
		else
			ctx.out << "kvfdp " << KVFDP_VERSION << '\n';
		ctx.exit_code = kExitOk;
	});
}

} // namespace kvfdp::cli
