// The ublk device's side of kvfdpd's lifecycle (daemon.cpp runs the steps): its queues,
// ADD_DEV or user recovery of a device a killed kvfdpd left, and its stop and removal.
#pragma once

#include <string>

#include "common/unique_fd.hpp"
#include "common/result.hpp"
#include "kvfdpd/daemon/ctl/daemon_state.hpp"
#include "kvfdpd/daemon/ctl/start_steps.hpp"

namespace kvfdp::daemon {

// Makes the queues (one thread each, side by side) and waits until each has fetched.
Result<void> create_queues(State &s, StartSteps &steps);
// ADD_DEV with the features and data mode this kernel and backend allow, then SET_PARAMS.
Result<void> add_device(State &s);
// --recover: the device must exist with recovery enabled and match this namespace.
Result<void> begin_recovery(State &s);
// --attach: a device of --dev-id left by a killed kvfdpd (user recovery) is re-attached,
// an absent one is created. Sets recover_id when there is one to recover.
Result<void> choose_attach(State &s);
// The ublk disk pid serves ("" when none), for naming another kvfdpd in a refusal.
[[nodiscard]] std::string served_disk(State &s, int pid);
// Stops serving. remove: STOP_DEV (TRY_STOP_DEV when safe) and DEL_DEV the device; else it
// stays, its I/O held by the driver (user recovery) for the next kvfdpd. claim (an exclusive
// open of the disk that keeps it from being mounted meanwhile) is closed after STOP_DEV:
// DEL_DEV waits for it. safe: the disk was checked free, and a device with SAFE_STOP_DEV is
// stopped only if it still is (a disk opened meanwhile is left instead).
void teardown(State &s, bool remove, UniqueFd *claim = nullptr, bool safe = false);
// The stop of a live device (SIGTERM, SIGINT, or a failure after it went live): --keep
// leaves it; otherwise it is removed unless it is held (mounted, dm/md, swap) and not
// --force-remove, when it is left like --keep. One line says which.
void stop_live(State &s);

}  // namespace kvfdp::daemon
