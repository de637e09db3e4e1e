// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The tagger's state (tagger.bpf.c includes this once): the globals the loader sets before
 * load, the maps it shares with kvfdpd (disks, policies, writer identities, counters, tag
 * slots, rings), and the small helpers over them.
 */
#ifndef KVFDP_TAGGER_MAPS_BPF_H
#define KVFDP_TAGGER_MAPS_BPF_H

/* Set by the loader before load. */
const volatile __u32 nr_slots = KVFDP_MAX_SLOTS; /* queues * depth */
const volatile __u32 queue_depth = 1;
const volatile __u32 default_class = KVFDP_CLASS_NOT_SET;
/* Address of iomap_dio_bio_end_io (from /proc/kallsyms), 0 = no DIO attribution. */
const volatile __u64 dio_end_io = 0;
/* Address of bio_chain_endio: the front part of a bio the block layer split ends into its
 * parent (bi_private), which carries the iomap end_io. 0 = not followed. */
const volatile __u64 chain_end_io = 0;
/* FMODE_CREATED in file->f_mode (include/linux/fs.h). */
const volatile __u32 fmode_created = 0x100000;
/* Offset of i_vnode in struct xfs_inode (from vmlinux or xfs module BTF), 0 = unknown. */
const volatile __u32 xfs_vnode_off = 0;
/* Report hint / create / unlink events on every filesystem, not only watched ones. */
const volatile __u32 all_filesystems = 0;

/* Global slot sequence; a slot's seq is the value after its increment. */
__u64 slot_seq = 0;
/* Entries in disk_names. The loader adds one per name it inserts (and takes one per name
 * it deletes); the program takes one per name it learns. 0: no name lookups at all. */
__u32 disk_names_pending = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, KVFDP_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct kvfdp_tag_slot);
} slots SEC(".maps");

/* disk dev_t -> index and flags. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KVFDP_MAX_DISKS);
	__type(key, __u32);
	__type(value, struct kvfdp_disk);
} disks SEC(".maps");

/* Hidden disks by name (kvfdp_disk_name) until their first request gives their dev_t. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct kvfdp_disk_name);
	__type(value, struct kvfdp_disk);
} disk_names SEC(".maps");

/* Filesystems (s_dev) whose lifetime events are reported. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} watched_fs SEC(".maps");

/* (dev, ino) -> class: inodes with a policy (directory rules, the loader). An LRU hash: when
 * it is full the least recently used entry goes (a dead file's, under create + rename churn
 * that no hook saw), so a new file's rule always applies. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KVFDP_INODE_MAP_ENTRIES);
	__type(key, struct kvfdp_inode_key);
	__type(value, __u32);
} inode_policy SEC(".maps");

/* Directory (dev, ino) -> class given to files created in it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct kvfdp_inode_key);
	__type(value, __u32);
} dir_rules SEC(".maps");

/* Directory (dev, ino) -> writer id (KVFDP_WRITER_NAMED | n): files created anywhere in its
 * subtree belong to that named writer. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct kvfdp_inode_key);
	__type(value, __u32);
} dir_writers SEC(".maps");

/* cgroup v2 id -> writer id (KVFDP_WRITER_NAMED | n): files its tasks create belong to that
 * named writer (unless a writer directory covers them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u32);
} writer_cgroups SEC(".maps");

/* (cgroup, writer directory) -> writer id: identities (KVFDP_WRITER_IDENT) and cgroup-pattern
 * writers (KVFDP_WRITER_NAMED) userspace resolved for a raw id; later creates of that cgroup
 * in that directory get the id here. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KVFDP_IDENT_MAP_ENTRIES);
	__type(key, struct kvfdp_ident_key);
	__type(value, __u32);
} writer_idents SEC(".maps");

/* Writer directory (dev, ino; ino 0: files in the filesystem root or a watch_dir itself) ->
 * the writer id userspace last resolved for a file created there. A cgroup with no
 * writer_idents entry there (a restarted pod's new cgroup) gets it at create, provisionally
 * (KVFDP_EVF_PROVISIONAL): userspace checks it against the cgroup's own identity. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KVFDP_DIR_IDENT_MAP_ENTRIES);
	__type(key, struct kvfdp_inode_key);
	__type(value, __u32);
} dir_idents SEC(".maps");

/* Directory (dev, ino) -> KVFDP_IDENT_DIR or KVFDP_IDENT_ROOT: what bounds a writer directory
 * besides the filesystem root. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct kvfdp_inode_key);
	__type(value, __u32);
} ident_dirs SEC(".maps");

/* (dev, ino) -> writer id of the task that created the file (tag slots carry it). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KVFDP_INODE_MAP_ENTRIES);
	__type(key, struct kvfdp_inode_key);
	__type(value, __u32);
} inode_writer SEC(".maps");

/* (dev, ino) -> bytes written by tagged requests. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KVFDP_INODE_MAP_ENTRIES);
	__type(key, struct kvfdp_inode_key);
	__type(value, __u64);
} inode_bytes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KVFDP_NR_COUNTERS);
	__type(key, __u32);
	__type(value, struct kvfdp_counter);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KVFDP_NR_SOURCE_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} source_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KVFDP_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Request records (record mode); the loader sizes it. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} requests SEC(".maps");

/* F_SET_RW_HINT arguments between syscall entry and exit. */
struct fcntl_args {
	__u64 fd;
	__u64 hint;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct fcntl_args);
} fcntl_pending SEC(".maps");

static __always_inline void stat_inc(__u32 id)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &id);

	if (v)
		*v += 1;
}

static __always_inline bool fs_watched(__u32 dev)
{
	return all_filesystems || bpf_map_lookup_elem(&watched_fs, &dev);
}

static __always_inline __u32 inode_dev(struct inode *inode)
{
	return BPF_CORE_READ(inode, i_sb, s_dev);
}

#endif /* KVFDP_TAGGER_MAPS_BPF_H */
