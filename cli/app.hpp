// The kvfdp command line: builds the CLI11 app and runs the chosen subcommand.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "proto/exit_codes.hpp"

namespace kvfdp::cli {

class CommandContext;

// Parses argv and runs the subcommand; returns the process exit code.
int run(int argc, char **argv);
// The same with the output streams given (tests capture them). argv[0] is the program name.
int run(int argc, char **argv, std::ostream &out, std::ostream &err);
// Convenience for tests: args excludes the program name; setup (if set) may adjust the
// CommandContext before parsing (e.g. install CommandContext::device_factory).
int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err,
	const std::function<void(CommandContext &)> &setup = {});

}  // namespace kvfdp::cli
