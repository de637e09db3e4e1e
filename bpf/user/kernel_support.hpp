// What the running kernel lets the tagger use: mounts bpffs / tracefs / securityfs when
// missing and probes for syscall tracepoints, an active BPF LSM and iomap direct I/O; asks
// BTF for the functions its fentry/fexit programs attach to and the struct fields its
// programs read.
#pragma once

#include <cstdint>
#include <string>

namespace kvfdp::bpf {

struct Features {
	bool bpffs = false;                // /sys/fs/bpf is a bpffs (mounted here if it was not)
	bool syscall_tracepoints = false;  // tracefs at /sys/kernel/tracing with events/syscalls
	bool bpf_lsm = false;              // "bpf" is in /sys/kernel/security/lsm
	bool fexit_fcntl = false;          // vmlinux BTF has __x64_sys_fcntl (fexit target)
	bool fentry_file_open = false;     // vmlinux BTF has security_file_open (fentry target)
	uint64_t dio_end_io = 0;           // iomap_dio_bio_end_io from /proc/kallsyms, 0 if hidden
	uint64_t chain_end_io = 0;         // bio_chain_endio (a split's front part ends into its
					   // parent), 0 if hidden
	std::string notes;                 // why something is off, one clause per item
};

// Mounts what is missing (root only; failures are noted, not fatal) and probes.
[[nodiscard]] Features probe_features();

// BTF probes, asked the way CO-RE decides at load:
// the offset of i_vnode in struct xfs_inode, from vmlinux BTF or the xfs module's; -1 if unknown.
[[nodiscard]] int32_t xfs_vnode_offset();
// The write-hint field kvfdp_rq_write_hint() (bpf/core_fixes.bpf.h) reads, tried in its
// order: "bio.bi_write_hint", "request.write_hint", or "" (none, or no vmlinux BTF).
[[nodiscard]] std::string write_hint_field();

}  // namespace kvfdp::bpf
