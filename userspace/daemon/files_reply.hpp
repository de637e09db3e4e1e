// The data of kvfdpd's `files` control reply, built from the BPF tagger's per-file table
// (bpf::FileTable): one row per tagged file, newest first, with class, bytes, birth/death as
// Unix times and the measured lifetime; plus per-class lifetime summaries.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "bpf/user/files.hpp"

namespace kvfdp::daemon {

// limit: at most this many rows (newest event first: birth of a live file, death of a
// deleted one). realtime_minus_mono_ns: CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns, to turn
// the tagger's monotonic timestamps into Unix times. Returns {"available":true, "live",
// "deleted", "matched", "files":[...], "lifetimes":[...]} (docs/control.md).
[[nodiscard]] nlohmann::json files_json(const bpf::FileTable &table, uint64_t limit, int64_t realtime_minus_mono_ns);

// CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns.
[[nodiscard]] int64_t realtime_minus_monotonic_ns();

} // namespace kvfdp::daemon
