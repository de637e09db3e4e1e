// Helpers shared by the CLI tests: running kvfdp::cli::run with captured output, a model
// device that has seen a fixed workload, golden-file comparison.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "nvme/device.hpp"
#include "cli/app.hpp"

namespace kvfdp::cli::test {

struct Ran {
	int rc = 0;
	std::string out;
	std::string err;
};

// Runs the CLI with args (no program name); setup may adjust the CommandContext.
Ran run_cli(const std::vector<std::string> &args,
	    const std::function<void(CommandContext &)> &setup = {});

// A model device (64 MiB, 4 KiB LBAs, 1 MiB RUs, 4 handles, OP 0.28) after a fixed,
// deterministic workload: three passes over the namespace, 128 KiB writes, classes spread
// over the handles, plus one write to an invalid handle (an FDP event). Data lives in a
// temporary file removed with the device.
Result<std::unique_ptr<nvme::Device>> make_worked_model();

// Compares text with tests/cli/golden/NAME; with KVFDP_UPDATE_GOLDEN=1 in the environment,
// rewrites the file instead. Returns "" on match, else a description of the difference.
std::string golden_diff(const std::string &name, const std::string &text);

}  // namespace kvfdp::cli::test
