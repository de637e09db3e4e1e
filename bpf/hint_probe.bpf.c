// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * hint_probe: counts fcntl(fd, F_SET_RW_HINT, &hint) calls made by one process and keeps
 * the last hint value. Syscall tracepoints only, so it loads wherever tracepoint programs
 * do (fentry/lsm are refused on some hosts even for root).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bpf/tag.h"

/* Set by the loader before load: the tgid whose calls are counted. */
const volatile __u32 target_tgid = 0;

__u64 set_hint_calls = 0;
__u64 last_hint = 0;
__s64 last_fd = -1;

SEC("tracepoint/syscalls/sys_enter_fcntl")
int on_fcntl_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 hint = 0;

	if (tgid != target_tgid)
		return 0;
	if (ctx->args[1] != KVFDP_F_SET_RW_HINT)
		return 0;
	/* The argument is a user pointer to a u64 (F_SET_RW_HINT takes u64 *). */
	if (bpf_probe_read_user(&hint, sizeof(hint), (const void *)ctx->args[2]))
		return 0;
	last_hint = hint;
	last_fd = (__s64)ctx->args[0];
	__sync_fetch_and_add(&set_hint_calls, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
