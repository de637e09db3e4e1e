/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The tagger's map keys, counters and ring-buffer records, shared by tagger.bpf.c and the
 * kvfdp::bpf loader. The tag slot itself is in bpf/tag.h. Fixed-width fields, no pointers.
 * Device numbers are the kernel's dev_t encoding: major << 20 | minor.
 */
#ifndef KVFDP_BPF_TAGGER_H
#define KVFDP_BPF_TAGGER_H

#include "bpf/tag.h"

/* Most disks one tagger watches; a disk's index selects its counters. */
#define KVFDP_MAX_DISKS 16
/* Bios of one request walked to find an inode (a request can merge several files' bios). */
#define KVFDP_MAX_BIOS 16

/* struct kvfdp_disk.flags */
#define KVFDP_DISK_SLOTS 0x1  /* write tag slots for this disk (the ublk disk kvfdpd serves) */
#define KVFDP_DISK_RECORD 0x2 /* send every classified request over the requests ring */

/* Length of gendisk->disk_name (DISK_NAME_LEN). */
#define KVFDP_DISK_NAME_LEN 32

/* Value of the disks map (key: __u32 disk dev_t). */
struct kvfdp_disk {
	kvfdp_u32 index; /* 0 .. KVFDP_MAX_DISKS-1, chosen by the loader */
	kvfdp_u32 flags; /* KVFDP_DISK_* */
};

/* Key of the disk_names map: a hidden disk (NVMe multipath path nvmeXcYnZ) has no dev_t in
 * sysfs, so the loader names it; the first request on it moves it into disks by dev_t. */
struct kvfdp_disk_name {
	char name[KVFDP_DISK_NAME_LEN]; /* NUL-padded */
};

/* Writer ids (tag slot, request record and event .writer): who created a file. Three
 * disjoint spaces, told apart by the top two bits:
 * 0: unknown (created before the tagger watched, or on an unwatched filesystem);
 * KVFDP_WRITER_NAMED | n (bit 31): named writer n (1-based), the config's [[writer]] n-1, put
 *   in dir_writers, writer_cgroups or (cgroup patterns) writer_idents and dir_idents;
 * KVFDP_WRITER_IDENT | h (bit 30): an identity, h = 30 bits of the FNV-1a hash of its string
 *   (docs/bpf.md "Writer identity"; kvfdp_writer_of_identity), put in writer_idents by
 *   userspace for a (cgroup, writer directory), and in dir_idents for the directory;
 * else (bits 31 and 30 clear) kvfdp_writer_of_cgroup(the creating task's cgroup v2 id): a raw
 *   id, until userspace names the cgroup. */
#define KVFDP_WRITER_NAMED 0x80000000u
#define KVFDP_WRITER_IDENT 0x40000000u
#define KVFDP_WRITER_ID_MASK 0x3fffffffu /* the id bits of IDENT and raw ids */
/* Directory levels walked up from a new file to find the nearest directory rule / writer
 * directory and its writer directory: rules and writer directories cover their whole subtree
 * to this depth. */
#define KVFDP_MAX_DIR_DEPTH 16

/* 30 bits of a 64-bit value (its three 30-bit pieces xor-ed), never 0. */
static inline kvfdp_u32 kvfdp_fold30(kvfdp_u64 v)
{
	kvfdp_u64 x = (v ^ (v >> 30) ^ (v >> 60)) & KVFDP_WRITER_ID_MASK;
#ifdef __cplusplus
	kvfdp_u32 w = static_cast<kvfdp_u32>(x);
#else
	kvfdp_u32 w = (kvfdp_u32)x;
#endif

	return w ? w : 1;
}

/* A raw writer id: 30 bits of a cgroup v2 id (the id itself below 2^30), never 0. */
static inline kvfdp_u32 kvfdp_writer_of_cgroup(kvfdp_u64 cgroup_id)
{
	return kvfdp_fold30(cgroup_id);
}

/* The identity writer id of a 64-bit hash of an identity string: bit 30 | 30 bits. */
static inline kvfdp_u32 kvfdp_writer_of_identity(kvfdp_u64 hash)
{
	return KVFDP_WRITER_IDENT | kvfdp_fold30(hash);
}

/* The named writer id of the config's [[writer]] entry index (0-based). */
static inline kvfdp_u32 kvfdp_writer_named(kvfdp_u32 index)
{
	return KVFDP_WRITER_NAMED | (index + 1);
}

/* Whether a writer id is a raw cgroup-derived one (neither named nor an identity, not 0). */
static inline int kvfdp_writer_is_raw(kvfdp_u32 writer)
{
	return writer && !(writer & (KVFDP_WRITER_NAMED | KVFDP_WRITER_IDENT));
}

/* Key of writer_idents: a creating task's cgroup and the new file's writer directory. */
struct kvfdp_ident_key {
	kvfdp_u64 cgroup_id;
	kvfdp_u64 dir_ino; /* the writer directory's inode (kvfdp_event.writer_dir_ino), 0 none */
	kvfdp_u32 dev;     /* its filesystem's s_dev */
	kvfdp_u32 pad;     /* must be 0 */
};

/* ident_dirs values: how a directory bounds a writer directory. */
#define KVFDP_IDENT_DIR 1  /* it is a writer directory ([[writer]] cgroup_pattern + dir) */
#define KVFDP_IDENT_ROOT 2 /* its children are (watch_dir; the filesystem root always is) */

/* Key of the inode-policy, directory-rule and per-inode byte maps. */
struct kvfdp_inode_key {
	kvfdp_u32 dev; /* inode->i_sb->s_dev */
	kvfdp_u32 pad; /* must be 0 */
	kvfdp_u64 ino;
};

/* Request counter; the counters array is per-CPU, summed by the reader. */
struct kvfdp_counter {
	kvfdp_u64 requests;
	kvfdp_u64 bytes;
};

/* Op groups counted separately (index in the counters array). */
enum kvfdp_op_group {
	KVFDP_OPG_WRITE = 0,   /* REQ_OP_WRITE */
	KVFDP_OPG_DISCARD = 1, /* REQ_OP_DISCARD and REQ_OP_WRITE_ZEROES */
	KVFDP_NR_OPGS = 2,
};

/* counters[] index: ((disk * KVFDP_NR_OPGS + opg) * KVFDP_NR_CLASSES + cls). */
#define KVFDP_NR_COUNTERS (KVFDP_MAX_DISKS * KVFDP_NR_OPGS * KVFDP_NR_CLASSES)
/* source_counters[] index: disk * KVFDP_NR_SOURCES + source (requests only). */
#define KVFDP_NR_SOURCE_COUNTERS (KVFDP_MAX_DISKS * KVFDP_NR_SOURCES)

/* stats[] (per-CPU u64) indices. */
enum kvfdp_stat {
	KVFDP_STAT_ISSUED = 0,       /* requests seen on watched disks */
	KVFDP_STAT_SLOT_OOB = 1,     /* queue * depth + tag beyond the slot array */
	KVFDP_STAT_EVENT_DROP = 2,   /* lifetime events lost (ring full) */
	KVFDP_STAT_RECORD_DROP = 3,  /* request records lost (ring full) */
	KVFDP_STAT_INODE_PAGE = 4,   /* bios resolved to an inode through the page cache */
	KVFDP_STAT_INODE_DIO = 5,    /* bios resolved to an inode through iomap direct I/O */
	KVFDP_STAT_INODE_NONE = 6,   /* bios with data but no inode (metadata, anonymous) */
	KVFDP_STAT_DISK_LEARNED = 7, /* disk_names entries moved into disks by dev_t */
	/* The per-inode maps (inode_policy, inode_writer: LRU hashes of KVFDP_INODE_MAP_ENTRIES,
	 * the least recently used entry goes when one is full). */
	KVFDP_STAT_POLICY_ADDED = 8,   /* inode_policy entries created at file create */
	KVFDP_STAT_POLICY_REMOVED = 9, /* inode_policy entries removed (last unlink, rename over) */
	KVFDP_STAT_POLICY_FAILED = 10, /* inode_policy inserts that failed: a rule not applied */
	KVFDP_STAT_WRITER_ADDED = 11,  /* inode_writer entries created at file create */
	KVFDP_STAT_WRITER_REMOVED = 12,    /* inode_writer entries removed */
	KVFDP_STAT_WRITER_FAILED = 13,     /* inode_writer inserts that failed */
	KVFDP_STAT_RENAME_OVER = 14,       /* renames onto an existing file (kprobe/vfs_rename) */
	KVFDP_STAT_IDENT_HIT = 15,         /* creates whose writer came from writer_idents */
	KVFDP_STAT_IDENT_PROVISIONAL = 16, /* creates whose writer came from dir_idents */
	KVFDP_NR_STATS = 17,
};

/* Entries of each per-inode map (inode_policy, inode_writer, inode_bytes). */
#define KVFDP_INODE_MAP_ENTRIES 65536
/* Entries of writer_idents (an LRU hash: the least recently used (cgroup, directory) goes). */
#define KVFDP_IDENT_MAP_ENTRIES 16384
/* Entries of dir_idents (an LRU hash keyed by writer directory, kvfdp_inode_key). */
#define KVFDP_DIR_IDENT_MAP_ENTRIES 4096

/* struct kvfdp_tag_slot.flags: how the inode was found. */
#define KVFDP_SLOT_F_PAGE 0x1  /* page cache: page -> folio head -> mapping -> host */
#define KVFDP_SLOT_F_DIO 0x2   /* iomap direct I/O: bio -> iomap_dio -> file -> inode */
#define KVFDP_SLOT_F_MULTI 0x4 /* the request merged bios of more than one inode */

/* Lifetime event types. */
enum kvfdp_event_type {
	KVFDP_EV_HINT = 1,   /* fcntl(F_SET_RW_HINT) succeeded; value = hint */
	KVFDP_EV_CREATE = 2, /* a file was created; value = rule class or KVFDP_NO_CLASS */
	KVFDP_EV_UNLINK = 3, /* a link of the inode is removed; value = i_nlink when seen:
				* 1 before the last link goes, 0 after it went (xfs_iunlink) */
};

/* KVFDP_EV_CREATE.value when no directory rule matched. */
#define KVFDP_NO_CLASS 0xff

/* kvfdp_event.flags (CREATE). KVFDP_EVF_PROVISIONAL: the writer came from dir_idents, the id
 * last resolved in the writer directory: a guess userspace checks against the identity of the
 * creating cgroup (cgroup_id). */
#define KVFDP_EVF_PROVISIONAL 0x1

/* Where an event came from (kvfdp_event.hook). */
enum kvfdp_event_hook {
	KVFDP_HOOK_SYSCALL_TP = 1, /* syscall tracepoints */
	KVFDP_HOOK_LSM = 2,        /* lsm/inode_unlink */
	KVFDP_HOOK_KPROBE = 3,     /* kprobe/vfs_unlink, kprobe/vfs_rename (a rename over a file) */
	KVFDP_HOOK_FS_TP = 4,      /* raw_tp/ext4_unlink_enter, raw_tp/xfs_iunlink */
	KVFDP_HOOK_FENTRY = 5,     /* fexit/__x64_sys_fcntl, fentry/security_file_open */
};

/* A lifetime event on the events ring buffer. */
struct kvfdp_event {
	kvfdp_u64 t_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	kvfdp_u64 ino;
	kvfdp_u64 parent_ino; /* CREATE: the directory; else 0 */
	kvfdp_u64 bytes;      /* UNLINK: bytes the tagger attributed to the inode; else 0 */
	kvfdp_u32 type;       /* enum kvfdp_event_type */
	kvfdp_u32 dev;        /* s_dev */
	kvfdp_u32 pid;        /* tgid */
	kvfdp_u32 value;      /* see enum kvfdp_event_type */
	kvfdp_u32 hook;       /* enum kvfdp_event_hook */
	kvfdp_u32 writer;     /* CREATE: writer id (KVFDP_WRITER_*); else 0 */
	char comm[16];
	kvfdp_u64 cgroup_id;   /* CREATE: the creating task's cgroup v2 id (0: unknown) */
	kvfdp_u64 subtree_ino; /* CREATE: nearest ancestor directory with a rule or writer, or 0 */
	/* CREATE: the writer directory: the nearest ancestor in ident_dirs as KVFDP_IDENT_DIR,
	 * else the child of the filesystem root (or of a KVFDP_IDENT_ROOT directory) the file is
	 * under; 0 when the file is in that root itself or deeper than KVFDP_MAX_DIR_DEPTH. */
	kvfdp_u64 writer_dir_ino;
	kvfdp_u32 flags; /* CREATE: KVFDP_EVF_*; else 0 */
	kvfdp_u32 pad;   /* 0 */
};

/* One classified request on the requests ring (record mode). */
struct kvfdp_rq_record {
	kvfdp_u64 t_ns;   /* bpf_ktime_get_ns() at issue */
	kvfdp_u64 sector; /* 512-byte sectors */
	kvfdp_u64 ino;    /* first resolved inode or 0 */
	kvfdp_u32 sectors;
	kvfdp_u32 dev; /* the disk */
	kvfdp_u8 op;   /* REQ_OP_* */
	kvfdp_u8 cls;
	kvfdp_u8 source;
	kvfdp_u8 flags;   /* KVFDP_SLOT_F_* */
	kvfdp_u32 writer; /* writer id of ino (KVFDP_WRITER_*), 0 unknown */
};

#ifdef __cplusplus
static_assert(sizeof(kvfdp_disk) == 8, "disk ABI");
static_assert(sizeof(kvfdp_inode_key) == 16, "inode key ABI");
static_assert(sizeof(kvfdp_counter) == 16, "counter ABI");
static_assert(sizeof(kvfdp_disk_name) == KVFDP_DISK_NAME_LEN, "disk name ABI");
static_assert(sizeof(kvfdp_ident_key) == 24, "identity key ABI");
static_assert(sizeof(kvfdp_event) == 104, "event ABI");
static_assert(sizeof(kvfdp_rq_record) == 40, "record ABI");
#else
_Static_assert(sizeof(struct kvfdp_ident_key) == 24, "identity key ABI");
_Static_assert(sizeof(struct kvfdp_event) == 104, "event ABI");
_Static_assert(sizeof(struct kvfdp_rq_record) == 40, "record ABI");
#endif

#endif
