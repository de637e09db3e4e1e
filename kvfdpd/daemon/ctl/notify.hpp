// Service-manager readiness notifications (the sd_notify(3) datagram protocol, spoken
// directly so kvfdpd needs no libsystemd): READY, RELOADING, STOPPING, STATUS.
#pragma once

#include <cstdint>
#include <string>

namespace kvfdp::daemon {

// Sends msg (newline-separated KEY=VALUE assignments) as one datagram to $NOTIFY_SOCKET
// (a path, or '@name' for the abstract namespace). Returns 1 when sent, 0 when
// NOTIFY_SOCKET is unset or empty (not run by a service manager), -errno on failure.
// Never called on the I/O path.
int notify(const std::string &msg);
// notify(msg), with a warning line where it fails.
void send_notify(const std::string &msg);

// The messages kvfdpd sends, in the order of its lifecycle.
[[nodiscard]] std::string ready_message(const std::string &status);
// RELOADING=1 with MONOTONIC_USEC (CLOCK_MONOTONIC now), as Type=notify-reload expects.
[[nodiscard]] std::string reloading_message(uint64_t monotonic_usec);
[[nodiscard]] std::string stopping_message(const std::string &status);
[[nodiscard]] uint64_t monotonic_usec();

}  // namespace kvfdp::daemon
