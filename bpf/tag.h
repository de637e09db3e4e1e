/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The tag-slot ABI between the BPF tagger (tagger.bpf.c) and kvfdpd.
 * The slot array is a BPF_F_MMAPABLE BPF_MAP_TYPE_ARRAY indexed by
 * queue * queue_depth + tag; element i sits at i * round_up(sizeof(slot), 8).
 * The tagger writes every field, then seq last; a reader accepts a slot only when
 * seq changed since it last consumed that slot and sector / sectors match the request.
 * Fixed-width fields only, no pointers: included by C (BPF) and C++.
 */
#ifndef KVFDP_BPF_TAG_H
#define KVFDP_BPF_TAG_H

#ifdef __cplusplus
#include <cstdint>
typedef std::uint64_t kvfdp_u64;
typedef std::uint32_t kvfdp_u32;
typedef std::uint16_t kvfdp_u16;
typedef std::uint8_t kvfdp_u8;
#else
typedef __u64 kvfdp_u64;
typedef __u32 kvfdp_u32;
typedef __u16 kvfdp_u16;
typedef __u8 kvfdp_u8;
#endif

/* fcntl commands for per-inode write-life hints (include/uapi/linux/fcntl.h); the value is a
 * u64 RWH_WRITE_LIFE_*, that is an enum kvfdp_class. */
#define KVFDP_F_GET_RW_HINT 1035
#define KVFDP_F_SET_RW_HINT 1036

/* Lifetime classes are the RWH values of fcntl(F_SET_RW_HINT). */
enum kvfdp_class {
	KVFDP_CLASS_NOT_SET = 0,
	KVFDP_CLASS_NONE = 1,
	KVFDP_CLASS_SHORT = 2,
	KVFDP_CLASS_MEDIUM = 3,
	KVFDP_CLASS_LONG = 4,
	KVFDP_CLASS_EXTREME = 5,
	KVFDP_NR_CLASSES = 6,
};

/* Where a slot's class came from. */
enum kvfdp_tag_source {
	KVFDP_SRC_DEFAULT = 0,      /* nothing known: the default class */
	KVFDP_SRC_BIO_HINT = 1,     /* bio->bi_write_hint */
	KVFDP_SRC_INODE_POLICY = 2, /* page -> inode found in the inode-policy map */
	KVFDP_SRC_INODE_HINT = 3,   /* page -> inode -> i_write_hint */
	KVFDP_NR_SOURCES = 4,
};

/* Most slots the array holds: queues * depth must not exceed it. */
#define KVFDP_MAX_SLOTS 4096

struct kvfdp_tag_slot {
	kvfdp_u64 seq;     /* global sequence, written last; 0 = never written */
	kvfdp_u64 sector;  /* request start, 512-byte sectors */
	kvfdp_u32 sectors; /* request length, 512-byte sectors */
	kvfdp_u32 dev;     /* s_dev of the inode's superblock (kernel encoding), or 0 */
	kvfdp_u64 ino;     /* inode of the first page, or 0 */
	kvfdp_u8 cls;      /* enum kvfdp_class */
	kvfdp_u8 source;   /* enum kvfdp_tag_source */
	kvfdp_u8 op;       /* REQ_OP_* of the request */
	kvfdp_u8 flags;
	kvfdp_u32 writer; /* writer id of the first inode (tagger.h KVFDP_WRITER_*), 0 unknown */
};

#ifdef __cplusplus
static_assert(sizeof(kvfdp_tag_slot) == 40, "tag slot ABI");
#else
_Static_assert(sizeof(struct kvfdp_tag_slot) == 40, "tag slot ABI");
#endif

#endif
