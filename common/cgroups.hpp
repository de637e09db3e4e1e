// cgroup v2 names for writer identity: where the cgroup2 hierarchy is mounted, a cgroup's id
// (the inode of its directory there, which bpf_get_current_cgroup_id returns) and back.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/lru_map.hpp"
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
// hierarchy (at most max_dirs directories); error when no cgroup has it (gone, not in this
// hierarchy, or beyond the bound). Tests and a last resort only: CgroupPaths never walks.
[[nodiscard]] Result<std::string> cgroup_path_of(const std::string &root, uint64_t id,
						 size_t max_dirs = 65536);
// The paths of the cgroups under root ("/" first), breadth-first, at most max_dirs.
[[nodiscard]] std::vector<std::string> cgroup_paths_under(const std::string &root,
							  size_t max_dirs = 65536);
// The path of cgroup id from /proc/<pid>/cgroup, when that process is still in it (the path's
// id under root is id); error otherwise. O(1): one read and one stat.
[[nodiscard]] Result<std::string> cgroup_path_of_pid(const std::string &root, uint32_t pid,
						     uint64_t id);
// The path of cgroup id from its file handle: open_by_handle_at on the cgroup2 mount with a
// kernfs handle (the id's 8 bytes, of the type name_to_handle_at gives the root), then
// readlink of /proc/self/fd/N. Needs CAP_DAC_READ_SEARCH; a removed cgroup is ESTALE.
[[nodiscard]] Result<std::string> cgroup_path_by_handle(const std::string &root, uint64_t id);
// A parsed "0::" line of a /proc/PID/cgroup text, or "" when there is none.
[[nodiscard]] std::string cgroup_v2_line(const std::string &proc_cgroup_text);

// cgroup id -> path, resolved without walking the tree (cgroup_path_of_pid, else
// cgroup_path_by_handle) and kept in an LRU of at most `capacity` ids; an id neither finds is
// cached as unknown (""). Thread-safe.
class CgroupPaths {
public:
	explicit CgroupPaths(size_t capacity = 4096) : cache_(capacity) {}
	// Sets the cgroup2 mount (default: cgroup2_mount(), looked up at the first resolve).
	void set_root(std::string root);
	// The path of id ("" when unknown); pid (0: none) is a process that was in it.
	[[nodiscard]] std::string resolve(uint64_t id, uint32_t pid = 0);
	struct Stats {
		size_t entries = 0;
		size_t capacity = 0;
		uint64_t evictions = 0;
		uint64_t by_pid = 0;     // resolved from /proc/<pid>/cgroup
		uint64_t by_handle = 0;  // resolved from the cgroup's file handle
		uint64_t unresolved = 0;
	};
	[[nodiscard]] Stats stats();

private:
	std::mutex mu_;
	LruMap<uint64_t, std::string> cache_;
	std::string root_;
	bool root_looked_up_ = false;
	Stats counts_;
};
// The calling process's cgroup v2 path, from /proc/self/cgroup's "0::" line.
[[nodiscard]] Result<std::string> self_cgroup_path();

}  // namespace kvfdp
