// Writer ids -> names: [[writer]] entries and cgroup v2 paths.
#include "userspace/daemon/writers.hpp"

#include "bpf/tagger.h"
#include "common/cgroups.hpp"

namespace kvfdp::daemon {

uint32_t named_writer_id(size_t index)
{
	return KVFDP_WRITER_NAMED | static_cast<uint32_t>(index + 1);
}

void WriterNames::set_config(const placement::PolicyConfig &cfg)
{
	std::lock_guard g(mu_);
	named_.clear();
	for (const placement::WriterRule &w : cfg.writers)
		named_.push_back(!w.name.empty() ? w.name : !w.cgroup.empty() ? w.cgroup : w.dir);
}

std::string WriterNames::name_of(uint32_t writer, uint64_t cgroup_id)
{
	if (writer == 0)
		return "";
	std::lock_guard g(mu_);
	if (writer & KVFDP_WRITER_NAMED) {
		const uint32_t i = (writer & ~KVFDP_WRITER_NAMED) - 1;
		return i < named_.size() ? named_[i] : "writer " + std::to_string(i + 1);
	}
	const uint64_t id = cgroup_id ? cgroup_id : writer;
	auto it = cgroups_.find(id);
	if (it == cgroups_.end()) {
		if (!root_looked_up_) {
			auto r = cgroup2_mount();
			root_ = r ? *r : "";
			root_looked_up_ = true;
		}
		std::string path;
		if (!root_.empty()) {
			auto p = cgroup_path_of(root_, id);
			if (p)
				path = *p;
		}
		it = cgroups_.emplace(id, path).first;
	}
	return it->second.empty() ? "cgroup:" + std::to_string(id) : it->second;
}

}  // namespace kvfdp::daemon
