// Writer names for kvfdpd's replies: the tagger's writer ids (bpf/tagger.h KVFDP_WRITER_*)
// as the config's [[writer]] names, identity strings or cgroup v2 paths. Off the data path;
// thread-safe; every cache bounded.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/cgroups.hpp"
#include "placement/config.hpp"

namespace kvfdp::daemon {

// The tagger's id of the config's writer i (0-based): KVFDP_WRITER_NAMED | (i + 1).
[[nodiscard]] uint32_t named_writer_id(size_t index);

class WriterNames {
public:
	// Takes the names of the config's [[writer]] entries (name, else what it matches).
	void set_config(const placement::PolicyConfig &cfg);
	// Where identity names and cgroup paths come from: the tagger's identity resolver (its
	// cgroup path cache, and its id -> identity string). Unset: this object's own cache, and
	// identities unnamed. Both must outlive this object's use.
	void set_identity_source(CgroupPaths *cgroups,
				 std::function<std::string(uint32_t)> identity_name);
	// A named writer's name; an identity's string ("identity:<hex>" when not resolved since
	// kvfdpd started); else the cgroup path of the id (cgroup_id when known, else the raw
	// id's 30 bits, which equal the cgroup id below 2^30), "cgroup:<id>" when the cgroup is
	// gone or no cgroup2 hierarchy is mounted; "" for 0 (unknown).
	[[nodiscard]] std::string name_of(uint32_t writer, uint64_t cgroup_id = 0);
	// An identity writer's string when the resolver knows it, else "" (also for the other
	// kinds of writer id): what the learner keeps with its keys across restarts.
	[[nodiscard]] std::string identity_of(uint32_t writer);

	struct Stats {
		CgroupPaths::Stats cgroups;  // its own cache (unused once a source is set)
	};
	[[nodiscard]] Stats stats();

private:
	std::mutex mu_;
	std::vector<std::string> named_;
	CgroupPaths own_cgroups_;
	CgroupPaths *cgroups_ = &own_cgroups_;
	std::function<std::string(uint32_t)> identity_name_;
};

}  // namespace kvfdp::daemon
