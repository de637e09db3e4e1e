// kvfdpd's whole Prometheus exposition, the same text for the `metrics` control request and
// GET /metrics: its counters, the learner's keys, RUH Status, FDP statistics, kvfdp_daemon_up.
#pragma once

#include <string>

#include "kvfdpd/daemon/ctl/daemon_state.hpp"

namespace kvfdp::daemon {

// Safe on any thread (counters are atomics, the policy is read under its lock, the device's
// admin side is thread-safe). RUH and FDP statistics families are left out when the device
// has none or reading them fails.
[[nodiscard]] std::string metrics_exposition(State &s);

}  // namespace kvfdp::daemon
