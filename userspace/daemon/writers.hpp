// Writer names for kvfdpd's replies: the tagger's writer ids (bpf/tagger.h KVFDP_WRITER_*)
// as the config's [[writer]] names or cgroup v2 paths. Off the data path; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "placement/config.hpp"

namespace kvfdp::daemon {

// The tagger's id of the config's writer i (0-based): KVFDP_WRITER_NAMED | (i + 1).
[[nodiscard]] uint32_t named_writer_id(size_t index);

class WriterNames {
public:
	// Takes the names of the config's [[writer]] entries (name, else the cgroup or dir).
	void set_config(const placement::PolicyConfig &cfg);
	// A named writer's name; else the cgroup path of the id (cgroup_id when known, else the
	// writer id's 31 bits, which equal the cgroup id below 2^31), "cgroup:<id>" when the
	// cgroup is gone or no cgroup2 hierarchy is mounted; "" for 0 (unknown).
	[[nodiscard]] std::string name_of(uint32_t writer, uint64_t cgroup_id = 0);

private:
	std::mutex mu_;
	std::vector<std::string> named_;
	std::map<uint64_t, std::string> cgroups_;  // id -> path, or "" when not found
	std::string root_;                         // cgroup2 mount, looked up once
	bool root_looked_up_ = false;
};

}  // namespace kvfdp::daemon
