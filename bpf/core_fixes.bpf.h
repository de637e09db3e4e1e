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

/* The same as one direct load, for ptr a BTF pointer (a tp_btf or fentry argument, or a pointer
 * field read from one): the load's width is the running kernel's field size, so an enum that
 * vmlinux.h declares wider than the kernel does (bookworm's bpftool) reads right. */
#define KVFDP_LOAD_SIZED(dst, ptr, field)                                                          \
	do {                                                                                       \
		void *p_ = (void *)(ptr) + bpf_core_field_offset((ptr)->field);                    \
		switch (bpf_core_field_size((ptr)->field)) {                                       \
		case 1: (dst) = *(__u8 *)p_; break;                                                \
		case 2: (dst) = *(__u16 *)p_; break;                                               \
		case 4: (dst) = *(__u32 *)p_; break;                                               \
		default: (dst) = *(__u64 *)p_; break;                                              \
		}                                                                                  \
	} while (0)

/* The write hint the block layer carries for rq (bio: rq->bio), or 0 when this kernel carries
 * none. rq and bio are BTF pointers (tp_btf/block_rq_issue). */
static __always_inline __u32 kvfdp_rq_write_hint(struct request *rq, struct bio *bio)
{
	__u64 h = 0;
	struct bio___kvfdp_u16 *obio = (void *)bio;

	if (bpf_core_field_exists(bio->bi_write_hint)) {
		if (bio)
			KVFDP_LOAD_SIZED(h, bio, bi_write_hint);
	} else if (bpf_core_field_exists(obio->bi_write_hint)) {
		if (obio)
			KVFDP_LOAD_SIZED(h, obio, bi_write_hint);
	} else if (bpf_core_field_exists(((struct request___kvfdp_hint *)rq)->write_hint)) {
		struct request___kvfdp_hint *r = (void *)rq;

		KVFDP_LOAD_SIZED(h, r, write_hint);
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
 * kvfdp_inode_write_hint: the caller runs in a bounded loop over merged bios. bio is an
 * address (probe reads). */
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

/* The same for bio a BTF pointer: direct loads. */
static __always_inline __u32 kvfdp_bio_bvec_done_direct(struct bio *bio)
{
	struct bio___kvfdp_off *nbio = (void *)bio;

	if (bpf_core_field_exists(bio->bi_iter.bi_bvec_done))
		return bio->bi_iter.bi_bvec_done;
	if (bpf_core_field_exists(nbio->bi_iter.bi_offset))
		return nbio->bi_iter.bi_offset;
	return 0;
}

/* Bytes from compound_head / compound_info through mapping that one probe read takes. */
#define KVFDP_PAGE_WORDS 5

/* page->mapping of the head page of pg's folio (pg an address), with its low flag bits; 0 when
 * unreadable. compound_head / compound_info and mapping are read together (one probe read);
 * a tail page (bit 0 of that word set) costs a second read, of its head's mapping. A
 * subprogram, like kvfdp_inode_write_hint: its caller runs in a loop, and each variant's
 * relocation must stay inside its field_exists branch. The word is read as an integer: the
 * verifier rejects bit tests on it read as a pointer (it shares a union with lru.next). */
static __noinline __u64 kvfdp_folio_mapping(struct page *pg)
{
	struct page___kvfdp_info *npg = (void *)pg;
	__u64 w[KVFDP_PAGE_WORDS] = {};
	__u32 off_ch, off_map, span;
	unsigned long ch, sz;
	__u64 m = 0;
	bool info;

	off_map = bpf_core_field_offset(pg->mapping);
	if (bpf_core_field_exists(pg->compound_head)) {
		off_ch = bpf_core_field_offset(pg->compound_head);
		info = false;
	} else if (bpf_core_field_exists(npg->compound_info)) {
		off_ch = bpf_core_field_offset(npg->compound_info);
		info = true;
	} else {
		bpf_probe_read_kernel(&m, sizeof(m), (void *)pg + off_map);
		return m;
	}
	/* One read when mapping follows the head word within KVFDP_PAGE_WORDS words (it does in
	 * 6.1..7.3: 8 and 24), else two. */
	span = off_map - off_ch;
	if (off_map > off_ch && !(span & 7) && span / 8 < KVFDP_PAGE_WORDS) {
		if (bpf_probe_read_kernel(w, span + 8, (void *)pg + off_ch))
			return 0;
		ch = w[0];
		m = w[span / 8];
	} else {
		bpf_probe_read_kernel(&ch, sizeof(ch), (void *)pg + off_ch);
		bpf_probe_read_kernel(&m, sizeof(m), (void *)pg + off_map);
	}
	if (!(ch & 1))
		return m;
	if (info) {
		sz = bpf_core_type_size(struct page);
		pg = (sz & (sz - 1)) ? (struct page *)(ch - 1)
				     : (struct page *)((unsigned long)pg & ch);
	} else {
		pg = (struct page *)(ch - 1);
	}
	m = 0;
	bpf_probe_read_kernel(&m, sizeof(m), (void *)pg + off_map);
	return m;
}

#endif
