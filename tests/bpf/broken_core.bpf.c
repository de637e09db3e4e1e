// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * broken_core: a program the running kernel must refuse, for test_bpf_load_refused. Its one
 * CO-RE read is of a field no kernel has (struct bio___kvfdp_missing is matched against the
 * kernel's struct bio, which has no no_such_field), unguarded: libbpf poisons the instruction,
 * the verifier refuses it, and libbpf reports "failed to resolve CO-RE relocation ... struct
 * bio___kvfdp_missing.no_such_field". The counts map loads everywhere; the test makes it fail
 * on purpose (max_entries 0) to see a refused map named.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

struct bio___kvfdp_missing {
	int no_such_field;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("tp_btf/block_rq_issue")
int BPF_PROG(kvfdp_broken_rq_issue, struct request *rq)
{
	struct bio___kvfdp_missing *bio = (void *)BPF_CORE_READ(rq, bio);
	__u32 key = 0;
	__u64 *n = bpf_map_lookup_elem(&counts, &key);

	if (n && bio)
		*n += BPF_CORE_READ(bio, no_such_field);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
