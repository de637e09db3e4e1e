// kvfdp version: the CLI's version (compare it with kvfdpd's in `kvfdp status`).
#include "kvfdp_build.hpp"
#include "cli/subcommands.hpp"

namespace kvfdp::cli {

void add_version_command(CLI::App &app, CommandContext &ctx)
{
	auto *c = app.add_subcommand("version", "print the kvfdp version");
	c->callback([&ctx] {
		if (ctx.json())
			ctx.print_json({{"version", KVFDP_VERSION}});
		else
			ctx.out << "kvfdp " << KVFDP_VERSION << '\n';
		ctx.exit_code = proto::kExitOk;
	});
}

}  // namespace kvfdp::cli
