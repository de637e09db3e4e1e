// `kvfdp advise --twin` / `--window FILE`: advise from a running kvfdpd's twin window, or
// from one saved with --save-window (docs/advise.md, From a running kvfdpd).
#pragma once

#include <string>

#include "model/sim/advise.hpp"
#include "model/sim/cmd_advise.hpp"

namespace CLI {
class App;
}

namespace kvfdp::sim {

struct WindowArgs {
	bool twin = false;        // --twin
	std::string window_file;  // --window FILE
	std::string save_window;  // --save-window FILE
};

// True when sub asks for the twin's window: --twin, --window, --save-window, or the global
// --socket given.
[[nodiscard]] bool wants_window(const WindowArgs &w, const TwinWindowClient &client);
// The first option given on sub that a window source cannot take (the model's shape and the
// workload come with the window), as its refusal line; "" when none.
[[nodiscard]] std::string window_option_refusal(const CLI::App &sub);
// Fetches (or reads) the window, saves it when asked, sweeps it with o and prints the report
// (json: -o json). Returns the exit code; target is --target as typed, for the check command.
[[nodiscard]] int run_window_advise(const WindowArgs &w, const TwinWindowClient &client,
				    const AdviseOptions &o, const std::string &target, bool json);

}  // namespace kvfdp::sim
