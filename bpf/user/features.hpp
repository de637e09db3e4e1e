// What the running kernel lets the tagger use: mounts bpffs / tracefs / securityfs when
// missing and probes for syscall tracepoints, an active BPF LSM and iomap direct I/O.
#pragma once

#include <cstdint>
#include <string>

namespace kvfdp::bpf {

struct Features {
	bool bpffs = false;              // /sys/fs/bpf is a bpffs (mounted here if it was not)
	bool syscall_tracepoints = false; // tracefs at /sys/kernel/tracing with events/syscalls
	bool bpf_lsm = false;            // "bpf" is in /sys/kernel/security/lsm
	uint64_t dio_end_io = 0;         // iomap_dio_bio_end_io from /proc/kallsyms, 0 if hidden
	uint64_t chain_end_io = 0;       // bio_chain_endio (a split's front part ends into its
	                                 // parent), 0 if hidden
	std::string notes;               // why something is off, one clause per item
};

// Mounts what is missing (root only; failures are noted, not fatal) and probes.
[[nodiscard]] Features probe_features();

} // namespace kvfdp::bpf
