// The exit codes of kvfdp's commands and of kvfdpd, stable and documented (docs/cli.md and
// docs/deploy.md, Exit codes).
#pragma once

namespace kvfdp::proto {

// kvfdp's.
enum Exit : int {
	kExitOk = 0,
	kExitError = 1,       // the command ran and failed (device error, bad data)
	kExitUsage = 2,       // bad command line or config
	kExitNoDevice = 3,    // no daemon, device or model to talk to
	kExitUnsupported = 4  // the device lacks what was asked (e.g. FDP)
};

// kvfdpd's; the systemd unit (RestartPreventExitStatus=1 2) restarts none of the first two,
// which a restart cannot cure. Both come before any ublk device exists, but for
// require_tagger's refusal of a tagger that did not load, which removes the new device first.
enum DaemonExit : int {
	// a refused config file, device, socket path or environment
	kDaemonExitConfig = 1,
	// a bad command line (unknown option, bad or conflicting value), as kvfdp's
	kDaemonExitUsage = kExitUsage,
	// failed once the device was being created or served
	kDaemonExitRuntime = 3,
};

}  // namespace kvfdp::proto
