/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Kernel-layout differences the tagger reads through, chosen with CO-RE existence and
 * size checks only (never kernel versions):
 *  - the write hint: bio->bi_write_hint (6.9+, a 1-byte enum; absent in 5.18..6.8 and
 *    in 6.1) or rq->write_hint (unsigned short, 6.9..6.12 before the stable removal);
 *  - inode->i_write_hint: u8 in 6.1, a 1-byte enum from 6.9 (read field_size bytes);
 *  - the bytes done in a bio's current bvec: bi_iter.bi_bvec_done (6.1 to 6.18),
 *    bi_iter.bi_offset in 7.3's BTF (the field was renamed; bvec_iter is packed there);
 *  - a tail page's head: page->compound_head (head + 1) up to 6.18; 7.3's BTF names it
 *    compound_info, which holds a mask (head = page & info) where struct page's size is a
 *    power of two, else head + 1, read as an integer (it shares a union with lru).
 */
#ifndef KVFDP_CORE_FIXES_BPF_H
#define KVFDP_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* struct request as it was in 6.9..6.12: it carried the hint itself. */
struct request___kvfdp_hint {
	unsigned short write_hint;
} __attribute__((preserve_access_index));

/* struct bio before the hint was removed (<= 5.17): an unsigned short. From 6.9 the
 * field is an enum (vmlinux.h's struct bio). CO-RE does not match an int field against
 * an enum one, so each width needs its own variant. */
struct bio___kvfdp_u16 {
	unsigned short bi_write_hint;
} __attribute__((preserve_access_index));

/* struct inode up to 6.8: i_write_hint is a u8 (an enum rw_hint from 6.9). */
struct inode___kvfdp_u8 {
	__u8 i_write_hint;
} __attribute__((preserve_access_index));

/* struct bvec_iter as 7.3's BTF has it: bi_bvec_done is named bi_offset. The flavour
 * suffix (___kvfdp_off) makes libbpf match it, nested in bio___kvfdp_off, against the
 * running kernel's struct bvec_iter and struct bio. */
struct bvec_iter___kvfdp_off {
	unsigned int bi_offset;
} __attribute__((preserve_access_index));

struct bio___kvfdp_off {
	struct bvec_iter___kvfdp_off bi_iter;
} __attribute__((preserve_access_index));

/* struct page as 7.3's BTF has it: compound_head is named compound_info. */
struct page___kvfdp_info {
	unsigned long compound_info;
} __attribute__((preserve_access_index));

/* Highest valid RWH value; anything above is treated as "no hint". */
#define KVFDP_RWH_MAX 5

/* Reads an integer field of 1..8 bytes whatever its width on the running kernel. */
#define KVFDP_READ_SIZED(dst, ptr, field)                                                          \
	do {                                                                                       \
		__u64 v_ = 0;                                                                      \
		bpf_probe_read_kernel(&v_, bpf_core_field_size((ptr)->field) & 0xf,                \
				      &(ptr)->field);                                              \
		(dst) = v_;                                                                        \
	} while (0)

/* The write hint the block layer carries for rq, or 0 when this kernel carries none. */
static __always_inline __u32 kvfdp_rq_write_hint(struct request *rq)
{
	__u64 h = 0;
	struct bio *bio = BPF_CORE_READ(rq, bio);
	struct bio___kvfdp_u16 *obio = (void *)bio;

	if (bpf_core_field_exists(bio->bi_write_hint)) {
		if (bio)
			KVFDP_READ_SIZED(h, bio, bi_write_hint);
	} else if (bpf_core_field_exists(obio->bi_write_hint)) {
		if (obio)
			KVFDP_READ_SIZED(h, obio, bi_write_hint);
	} else if (bpf_core_field_exists(((struct request___kvfdp_hint *)rq)->write_hint)) {
		struct request___kvfdp_hint *r = (void *)rq;

		KVFDP_READ_SIZED(h, r, write_hint);
	}
	return h <= KVFDP_RWH_MAX ? (__u32)h : 0;
}

/* inode->i_write_hint (set by fcntl F_SET_RW_HINT), or 0. A subprogram, not inlined:
 * inlined into a loop, clang hoists the variant's CO-RE relocation out of its
 * field_exists branch, and the verifier then meets the poisoned instruction. */
static __noinline __u32 kvfdp_inode_write_hint(struct inode *inode)
{
	__u64 h = 0;
	struct inode___kvfdp_u8 *old = (void *)inode;

	if (bpf_core_field_exists(inode->i_write_hint))
		KVFDP_READ_SIZED(h, inode, i_write_hint);
	else if (bpf_core_field_exists(old->i_write_hint))
		KVFDP_READ_SIZED(h, old, i_write_hint);
	return h <= KVFDP_RWH_MAX ? (__u32)h : 0;
}

/* The bytes already done in bio's current bvec (bi_iter), whichever name the running
 * kernel gives the field; 0 when it has neither. A subprogram for the same reason as
 * kvfdp_inode_write_hint: the caller runs in a bounded loop over merged bios. */
static __noinline __u32 kvfdp_bio_bvec_done(struct bio *bio)
{
	struct bio___kvfdp_off *nbio = (void *)bio;

	if (!bio)
		return 0;
	if (bpf_core_field_exists(bio->bi_iter.bi_bvec_done))
		return BPF_CORE_READ(bio, bi_iter.bi_bvec_done);
	if (bpf_core_field_exists(nbio->bi_iter.bi_offset))
		return BPF_CORE_READ(nbio, bi_iter.bi_offset);
	return 0;
}

/* The head page of pg's folio (bit 0 of compound_head / compound_info is set on tail
 * pages). A subprogram, like kvfdp_inode_write_hint: its caller runs in a loop, and each
 * variant's relocation must stay inside its field_exists branch. */
static __noinline struct page *kvfdp_page_head(struct page *pg, bool *tail)
{
	struct page___kvfdp_info *npg = (void *)pg;
	unsigned long ch = 0, sz;

	*tail = false;
	/* The verifier rejects bit tests on the field read as a pointer (it shares a union with
	 * lru.next), so read it as a scalar. */
	if (bpf_core_field_exists(pg->compound_head)) {
		bpf_probe_read_kernel(&ch, sizeof(ch), &pg->compound_head);
		if (!(ch & 1))
			return pg;
		*tail = true;
		return (struct page *)(ch - 1);
	}
	if (bpf_core_field_exists(npg->compound_info)) {
		bpf_probe_read_kernel(&ch, sizeof(ch), &npg->compound_info);
		if (!(ch & 1))
			return pg;
		*tail = true;
		sz = bpf_core_type_size(struct page);
		if (!(sz & (sz - 1)))
			return (struct page *)((unsigned long)pg & ch);
		return (struct page *)(ch - 1);
	}
	return pg;
}

#endif
