// The exit codes of kvfdp's commands, stable and documented in docs/cli.md.
#pragma once

namespace kvfdp::proto {

enum Exit : int {
	kExitOk = 0,
	kExitError = 1,       // the command ran and failed (device error, bad data)
	kExitUsage = 2,       // bad command line or config
	kExitNoDevice = 3,    // no daemon, device or model to talk to
	kExitUnsupported = 4  // the device lacks what was asked (e.g. FDP)
};

}  // namespace kvfdp::proto
