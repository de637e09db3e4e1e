// Writer identity strings (docs/bpf.md, "Writer identity"): a cgroup v2 path with its instance
// parts (pod UIDs, container ids, transient scope numbers) normalised away, plus the writer's
// directory, so that a restarted workload is the same writer. Pure functions, no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvfdp {

// The cgroup path with each instance part replaced by '*', component by component:
//   - a run of 64 hex digits (a container id: cri-containerd-, crio-, docker-, libpod-,
//     containerd- scopes, and the bare ids of the cgroupfs driver);
//   - "pod" followed by a pod UID (36 characters, '-' or '_' between the hex groups, or 32 hex
//     digits as static pods have): kubepods-burstable-pod<uid>.slice, pod<uid>;
//   - the numbers of systemd transient units: run-r<hex>.scope, run-u<N>.scope/.service,
//     run-p<N>-i<N>.scope, session-<N>.scope.
// Everything else is kept: services, template instances (foo@1.service), libpod_parent.
[[nodiscard]] std::string normalise_cgroup_path(std::string_view path);

// A writer's identity string: "<normalised cgroup>@<dir>", or the normalised cgroup alone
// when dir is "" (the file is in its filesystem's root).
[[nodiscard]] std::string writer_identity(std::string_view cgroup_path, std::string_view dir);

// FNV-1a 64 of an identity string (bpf/tagger.h kvfdp_writer_of_identity folds it to an id).
[[nodiscard]] uint64_t identity_hash(std::string_view identity);

// Whether a cgroup path matches a [[writer]] cgroup_pattern: '*' matches any run of
// characters within one path component (not '/'), "**" any run including '/'; every other
// character matches itself.
[[nodiscard]] bool cgroup_pattern_matches(std::string_view pattern, std::string_view path);

}  // namespace kvfdp
