// The data of kvfdpd's `files` control reply, built from the BPF tagger's per-file table
// (bpf::FileTable): one row per tagged file, filtered and ranked over all records (newest or
// largest first), with class, writer, bytes, birth/death as Unix times and the measured
// lifetime; plus per-class lifetime summaries.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "bpf/user/files.hpp"
#include "proto/files_request.hpp"

namespace kvfdp::daemon {

// Names a file's writer for the reply ("" leaves it out): e.g. the named writer, or the
// cgroup path of its cgroup id.
using WriterNamer = std::function<std::string(const bpf::FileRecord &)>;

// realtime_minus_mono_ns: CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns, to turn the tagger's
// monotonic timestamps into Unix times. Returns proto::FilesReply's JSON (available, the
// counts of live, deleted and matching records, the rows, the lifetimes; docs/control.md).
[[nodiscard]] nlohmann::json files_json(const bpf::FileTable &table, const proto::FilesQuery &q,
					int64_t realtime_minus_mono_ns,
					const WriterNamer &namer = {});
// The newest limit rows of everything.
[[nodiscard]] nlohmann::json files_json(const bpf::FileTable &table, uint64_t limit,
					int64_t realtime_minus_mono_ns);

// CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns.
[[nodiscard]] int64_t realtime_minus_monotonic_ns();

}  // namespace kvfdp::daemon
