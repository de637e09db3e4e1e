// The config's [[writer]] entries as the tagger applies them (IdentityResolver::configure),
// for kvfdpd and `kvfdp record` alike. Header-only: fields of placement::WriterRule, no code
// of the placement library.
#pragma once

#include <vector>

#include "bpf/tagger.h"
#include "bpf/user/identity.hpp"
#include "placement/config.hpp"

namespace kvfdp::bpf {

// Entry i becomes named writer kvfdp_writer_named(i); its label is its name (the parser
// defaults it to what the entry matches).
[[nodiscard]] inline std::vector<WriterSpec>
writer_specs(const std::vector<placement::WriterRule> &writers)
{
	std::vector<WriterSpec> out;
	for (size_t i = 0; i < writers.size(); i++) {
		const placement::WriterRule &w = writers[i];
		out.push_back(WriterSpec{w.name, w.line, w.cgroup, w.dir, w.cgroup_pattern,
					 kvfdp_writer_named(static_cast<kvfdp_u32>(i))});
	}
	return out;
}

}  // namespace kvfdp::bpf
