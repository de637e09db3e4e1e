// kvfdpd's lifecycle: open the backend, validate the policy, create (or recover) the ublk
// device, run the queues, the tagger and the control socket, reload on SIGHUP, drain and
// remove the device on SIGTERM (or leave it for the next kvfdpd while it is held).
#pragma once

#include <cstdint>
#include <string>

#include "proto/exit_codes.hpp"
#include "proto/default_paths.hpp"
#include "kvfdpd/daemon/ctl/backend.hpp"
#include "model/twin/twin.hpp"

namespace kvfdp::daemon {

struct DaemonOptions {
	BackendOptions backend;
	std::string config_path;       // policy TOML
	bool config_explicit = false;  // a missing file is an error only when given
	std::string socket_path = proto::kDefaultSocket;
	uint16_t queues = 0;  // 0: --queues auto (auto_queue_count)
	uint16_t depth = 64;
	uint32_t io_buf_bytes = 512 * 1024;  // per tag (ublk max_sectors)
	int recover_id = -1;                 // --recover DEV_ID: re-attach to that device
	int dev_id = -1;                     // --dev-id: ask ADD_DEV for this id
	bool attach = false;        // --attach: recover dev_id if it was left, else create it
	bool keep = false;          // leave the device on exit (recoverable)
	bool force_remove = false;  // remove it on SIGTERM even while it is mounted
	bool no_tagger = false;     // run without the BPF tagger (all writes default)
	// --require-tagger (or require_tagger = true in the config): a start whose tagger is not
	// active fails with kDaemonExitConfig instead of serving DEGRADED; require_tagger_from says
	// which ("--require-tagger" or "FILE:LINE").
	bool require_tagger = false;
	std::string require_tagger_from;
	std::string bpf_pin_root = proto::
		kDefaultPinRoot;  // the tagger's pinned sets, one per disk ("none": not pinned)
	bool fixed_buffers = true;
	bool zero_copy = true;  // where the driver has UBLK_F_AUTO_BUF_REG (ublk/data_mode.hpp)
	bool zero_copy_register =
		false;         // per-request registration even where AUTO_BUF_REG exists (testing)
	bool batch_io = true;  // UBLK_F_BATCH_IO where the driver offers it (ublk/features.hpp)
	std::string ready_file;      // written with the device path once serving
	std::string metrics_listen;  // --metrics-listen: GET /metrics there ("" = off)
	// --placement learned: handles by (writer, class) from measured lifetimes (learned.hpp);
	// else the class map. Its soft state is kept in learn_state ("" = not kept): a
	// directory holds a file per device (learned.hpp LearnedOptions).
	bool learn = false;
	std::string learn_state = "/var/lib/kvfdp/";
	double learn_period_s = 2.0;
	twin::TwinSettings twin;  // --twin-memory, --twin-op (docs/twin.md)
};

// Runs the daemon in the foreground until SIGTERM/SIGINT. Returns the process exit code: 0
// after a clean stop, else a proto::DaemonExit (proto/exit_codes.hpp) with one line on stderr.
[[nodiscard]] int run_daemon(const DaemonOptions &opts);

}  // namespace kvfdp::daemon
