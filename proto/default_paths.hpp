// Where kvfdpd and the kvfdp CLI find each other by default: the control socket and the
// tagger's pinned sets (docs/deploy.md).
#pragma once

namespace kvfdp::proto {

// Where kvfdpd listens and the CLI asks, unless --socket says otherwise (systemd's
// RuntimeDirectory=kvfdp makes /run/kvfdp; kvfdpd.service names the same path).
inline constexpr const char *kDefaultSocket = "/run/kvfdp/kvfdpd.sock";
// The bpffs directory of the tagger's pinned links and maps, one subdirectory per disk
// (ublkbN), unless kvfdpd --bpf-pin-dir says otherwise (docs/bpf.md).
inline constexpr const char *kDefaultPinRoot = "/sys/fs/bpf/kvfdp";

}  // namespace kvfdp::proto
