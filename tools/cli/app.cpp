// The kvfdp command line.
#include "tools/cli/app.hpp"

#include <cstdio>

#include <CLI/CLI.hpp>

namespace kvfdp::cli {

int run(int argc, char **argv)
{
	CLI::App app{"kvfdp: inspect and project NVMe FDP placement of KV-cache files", "kvfdp"};
	app.require_subcommand(1);
	auto *version = app.add_subcommand("version", "print the kvfdp version");
	version->callback([] { std::printf("kvfdp 0.1.0\n"); });
	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		int rc = app.exit(e);
		return rc == 0 ? kExitOk : kExitUsage;
	}
	return kExitOk;
}

} // namespace kvfdp::cli
