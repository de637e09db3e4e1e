// cgroup v2 names for writer identity: where the cgroup2 hierarchy is mounted, a cgroup's id
// (the inode of its directory there, which bpf_get_current_cgroup_id returns) and back.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.hpp"

namespace kvfdp {

// The mount point of the cgroup2 hierarchy, from /proc/self/mountinfo ("/sys/fs/cgroup", or
// "/sys/fs/cgroup/unified" on a hybrid host). Error when none is mounted.
[[nodiscard]] Result<std::string>
cgroup2_mount(const std::string &mountinfo = "/proc/self/mountinfo");
// The id of the cgroup at path (as /proc/PID/cgroup shows it, e.g. "/kv.slice/a.service";
// "/" is the root) under the mount root.
[[nodiscard]] Result<uint64_t> cgroup_id_of(const std::string &root, const std::string &path);
// The path of the cgroup with this id under root ("/" for the root), found by walking the
// hierarchy; error when no cgroup has it (gone, or not in this hierarchy).
[[nodiscard]] Result<std::string> cgroup_path_of(const std::string &root, uint64_t id);
// The calling process's cgroup v2 path, from /proc/self/cgroup's "0::" line.
[[nodiscard]] Result<std::string> self_cgroup_path();

}  // namespace kvfdp
