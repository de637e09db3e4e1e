// The `kvfdp record` subcommand, added to the kvfdp CLI app.
#pragma once

#include <CLI/CLI.hpp>

namespace kvfdp::bpf {

// Adds `record --disk DEV [--duration S] [--out FILE]`; when it runs, its exit status is
// stored in exit_code (0 ok, 1 failure, 2 bad usage).
void add_record_command(CLI::App &app, int &exit_code);

}  // namespace kvfdp::bpf
