// The kvfdp command line: builds the CLI11 app and runs the chosen subcommand.
#pragma once

namespace kvfdp::cli {

// Exit codes, stable and documented in docs/cli.md.
enum Exit : int {
	kExitOk = 0,
	kExitError = 1,      // the command ran and failed (device error, bad data)
	kExitUsage = 2,      // bad command line or config
	kExitNoDevice = 3,   // no daemon, device or model to talk to
	kExitUnsupported = 4 // the device lacks what was asked (e.g. FDP)
};

// Parses argv and runs the subcommand; returns the process exit code.
int run(int argc, char **argv);

} // namespace kvfdp::cli
