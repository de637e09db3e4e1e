// State: everything a running kvfdpd holds, shared by its lifecycle (daemon.cpp) and the
// control-request handlers (control_handlers.cpp); and the policy reload both of them use.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "nvme/device.hpp"
#include "kvfdpd/daemon/ctl/control_server.hpp"
#include "kvfdpd/daemon/io/queue_counters.hpp"
#include "kvfdpd/daemon/ctl/daemon.hpp"
#include "kvfdpd/daemon/ctl/drive_relocations.hpp"
#include "kvfdpd/daemon/ctl/event_loop.hpp"
#include "kvfdpd/daemon/learned.hpp"
#include "kvfdpd/daemon/policy_table.hpp"
#include "kvfdpd/daemon/io/queue.hpp"
#include "kvfdpd/daemon/ctl/tagger_owner.hpp"
#include "model/twin/twin.hpp"
#include "kvfdpd/ublk/ctrl.hpp"
#include "kvfdpd/ublk/data_mode.hpp"

namespace kvfdp::daemon {

// Queue threads see only their UblkQueue and the PolicyTable; the control thread reads
// counters and the current Policy.
struct State {
	DaemonOptions opts;
	std::unique_ptr<nvme::Device> device;
	nvme::DeviceInfo info;
	std::vector<nvme::Handle> handles;  // RUH Status at start (pids)
	uint16_t nruh = 0;
	std::unique_ptr<ublk::Control> ctrl;
	ublk::CtrlDevInfo dev{};
	ublk::DataMode data_mode = ublk::DataMode::copy;  // from dev.flags
	std::string data_note;  // why copy mode (ublk::DataModeChoice::note)
	std::string ublk_note;  // the 7.x features the driver lacks (ublk::FeatureChoice::note)
	bool dev_added = false;
	UniqueFd char_fd;
	std::vector<std::unique_ptr<UblkQueue>> queues;
	PolicyTable table;
	std::mutex policy_mu;  // guards policy and reloads (never taken by queue threads)
	std::shared_ptr<const placement::Policy> policy;
	uint64_t generation = 0;
	TaggerOwner tagger;
	std::unique_ptr<LearnedPlacement> learned;  // --placement learned, else null
	std::unique_ptr<twin::Twin> twin;           // the live WAF twin (docs/twin.md), else null
	// The drive's Media Reallocated events per handle (FDP, one namespace), else null.
	std::unique_ptr<DriveRelocations> drive_relocations;
	std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
	std::chrono::system_clock::time_point started_wall =
		std::chrono::system_clock::now();  // kvfdp_start_time_seconds
	bool recovered = false;
	std::string state = "starting";
	// The control-plane thread: the control socket's and GET /metrics' connections.
	std::unique_ptr<EventLoop> loop;
	std::unique_ptr<ControlServer> server;
};

// The queues' counters summed.
[[nodiscard]] proto::CounterSnapshot snapshot(const State &s);
// The policy in force.
[[nodiscard]] std::shared_ptr<const placement::Policy> current_policy(State &s);
// Loads the config, validates it against the device and publishes it (and its directory
// rules to the tagger). A bad config keeps the old policy; the error names the key. A missing
// default config (no --config) is the built-in map only at start (no policy yet): on a
// reload it is refused like any bad file.
[[nodiscard]] Result<uint64_t> reload_policy(State &s);

}  // namespace kvfdp::daemon
