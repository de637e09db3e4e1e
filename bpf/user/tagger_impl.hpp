// Tagger::Impl: what a loaded tagger holds (the skeleton, its mmapped slots map, the event
// ring), shared by the loader (tagger.cpp), its watched disks (tagger_disks.cpp) and its rule,
// identity and policy maps (tagger_maps.cpp). Not part of bpf/user's interface.
#pragma once

#include <bpf/libbpf.h>
#include <cstddef>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf/tagger.skel.h"
#include "bpf/user/tagger.hpp"

namespace kvfdp::bpf {

struct Tagger::Impl {
	tagger *skel = nullptr;
	void *slots_map = nullptr;
	size_t slots_len = 0;
	ring_buffer *rb = nullptr;
	const EventCallback *on_event = nullptr;
	const RecordCallback *on_record = nullptr;
	int ncpus = 1;
	std::string pinned_at;  // the pinned set's directory, "" when not pinned
	bool reopened = false;
	// A re-opened set's block_rq_issue program (by its pinned link; a loaded set uses the
	// skeleton's fd): for its run counters. -1 when unknown.
	int reopened_issue_prog = -1;

	// The skeleton's links, as an array (bpftool lays them out in program order).
	static constexpr size_t kLinks = sizeof(tagger::links) / sizeof(bpf_link *);
	bpf_link **links() { return reinterpret_cast<bpf_link **>(&skel->links); }
	bpf_program **progs() { return reinterpret_cast<bpf_program **>(&skel->progs); }

	~Impl()
	{
		if (rb)
			ring_buffer__free(rb);
		if (slots_map)
			::munmap(slots_map, slots_len);
		if (skel && !pinned_at.empty()) {
			// Pinned links stay attached: close their fds without libbpf's detach (which
			// would disable a perf-event link's event).
			for (size_t i = 0; i < kLinks; i++)
				if (bpf_link *l = links()[i]) {
					const int fd = bpf_link__fd(l);
					bpf_link__disconnect(l);
					if (fd >= 0)
						::close(fd);
				}
		}
		if (skel)
			tagger::destroy(skel);
		if (reopened_issue_prog >= 0)
			::close(reopened_issue_prog);
	}
};
static_assert(sizeof(tagger::links) % sizeof(bpf_link *) == 0 &&
		      sizeof(tagger::links) / sizeof(bpf_link *) ==
			      sizeof(tagger::progs) / sizeof(bpf_program *),
	      "the skeleton has one link per program");

}  // namespace kvfdp::bpf
