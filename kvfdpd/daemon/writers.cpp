// Writer ids -> names: [[writer]] entries, identities and cgroup v2 paths.
#include "kvfdpd/daemon/writers.hpp"

#include <cstdio>

#include "bpf/tagger.h"

namespace kvfdp::daemon {

uint32_t named_writer_id(size_t index)
{
	return kvfdp_writer_named(static_cast<uint32_t>(index));
}

void WriterNames::set_config(const placement::PolicyConfig &cfg)
{
	std::lock_guard g(mu_);
	named_.clear();
	for (const placement::WriterRule &w : cfg.writers)
		named_.push_back(!w.name.empty() ? w.name : placement::writer_rule_label(w));
}

void WriterNames::set_identity_source(CgroupPaths *cgroups,
				      std::function<std::string(uint32_t)> identity_name)
{
	std::lock_guard g(mu_);
	cgroups_ = cgroups ? cgroups : &own_cgroups_;
	identity_name_ = std::move(identity_name);
}

std::string WriterNames::name_of(uint32_t writer, uint64_t cgroup_id)
{
	if (writer == 0)
		return "";
	std::unique_lock g(mu_);
	if (writer & KVFDP_WRITER_NAMED) {
		const uint32_t i = (writer & ~KVFDP_WRITER_NAMED) - 1;
		return i < named_.size() ? named_[i] : "writer " + std::to_string(i + 1);
	}
	if (writer & KVFDP_WRITER_IDENT) {
		const auto source = identity_name_;
		g.unlock();
		std::string s = source ? source(writer) : std::string();
		if (s.empty()) {
			char buf[32];
			std::snprintf(buf, sizeof buf, "identity:%08x",
				      writer & KVFDP_WRITER_ID_MASK);
			s = buf;
		}
		return s;
	}
	CgroupPaths *cgroups = cgroups_;
	g.unlock();
	const uint64_t id = cgroup_id ? cgroup_id : writer;
	const std::string path = cgroups->resolve(id);
	return path.empty() ? "cgroup:" + std::to_string(id) : path;
}

std::string WriterNames::identity_of(uint32_t writer)
{
	if (!(writer & KVFDP_WRITER_IDENT) || (writer & KVFDP_WRITER_NAMED))
		return "";
	std::unique_lock g(mu_);
	const auto source = identity_name_;
	g.unlock();
	return source ? source(writer) : std::string();
}

WriterNames::Stats WriterNames::stats()
{
	return Stats{own_cgroups_.stats()};
}

}  // namespace kvfdp::daemon
