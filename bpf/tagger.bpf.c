// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tagger: classifies every WRITE / DISCARD / WRITE_ZEROES request issued to a watched disk
 * (tp_btf/block_rq_issue), publishes the class in a tag slot kvfdpd reads without a
 * syscall, counts requests and bytes per disk and class, attributes written bytes to
 * inodes, and reports file lifetime events (F_SET_RW_HINT, creation, unlink) over a ring
 * buffer. Class sources, in order: the bio's write hint; page/DIO -> inode -> the
 * inode-policy map, then the inode's i_write_hint; the default class. Each slot also carries
 * the writer of its file (the creating task's cgroup, or the named writer of a cgroup or a
 * directory subtree). It never changes or delays I/O.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/core_fixes.bpf.h"
#include "bpf/tagger.h"

#define KVFDP_REQ_OP_MASK 0xff
#define KVFDP_REQ_OP_WRITE 1
#define KVFDP_REQ_OP_DISCARD 3
#define KVFDP_REQ_OP_WRITE_ZEROES 9

#include "bpf/tagger_maps.bpf.h"
#include "bpf/tagger_bio.bpf.h"

/* A disk not in disks: if the loader named it (a hidden multipath path disk, whose dev_t
 * sysfs does not show), file it under its dev_t now and return its entry; else NULL. Only
 * while names are pending, so unwatched disks cost one load of a global otherwise. */
static __always_inline struct kvfdp_disk *learn_disk(struct gendisk *disk, __u32 devt)
{
	struct kvfdp_disk_name key = {};
	struct kvfdp_disk *named, v;

	if (!disk_names_pending)
		return NULL;
	if (bpf_core_read_str(key.name, sizeof(key.name), &disk->disk_name) <= 0)
		return NULL;
	named = bpf_map_lookup_elem(&disk_names, &key);
	if (!named)
		return NULL;
	v = *named;
	bpf_map_update_elem(&disks, &devt, &v, BPF_NOEXIST);
	if (bpf_map_delete_elem(&disk_names, &key) == 0) {
		__sync_fetch_and_add(&disk_names_pending, -1);
		stat_inc(KVFDP_STAT_DISK_LEARNED);
	}
	return bpf_map_lookup_elem(&disks, &devt);
}

/* The per-disk counters: requests and bytes per op group and class, requests per source. */
static __always_inline void count_request(const struct kvfdp_disk *d, __u32 op, __u32 bytes,
					  const struct rq_class *c)
{
	__u32 opg = op == KVFDP_REQ_OP_WRITE ? KVFDP_OPG_WRITE : KVFDP_OPG_DISCARD;
	__u32 ci = (d->index * KVFDP_NR_OPGS + opg) * KVFDP_NR_CLASSES + c->cls;
	__u32 si = d->index * KVFDP_NR_SOURCES + c->source;
	struct kvfdp_counter *ctr;
	__u64 *sc;

	if (d->index >= KVFDP_MAX_DISKS)
		return;
	ctr = bpf_map_lookup_elem(&counters, &ci);
	sc = bpf_map_lookup_elem(&source_counters, &si);
	if (ctr) {
		ctr->requests += 1;
		ctr->bytes += bytes;
	}
	if (sc)
		*sc += 1;
}

/* The request's tag slot, which the ublk server reads when the request reaches it: indexed by
 * hardware queue and tag, seq written last so a reader never takes a half-written slot. */
static __always_inline void fill_slot(struct request *rq, __u32 op, __u64 sector, __u32 bytes,
				      const struct rq_class *c, __u32 writer)
{
	struct kvfdp_tag_slot *s;
	__u32 idx;

	idx = rq->mq_hctx->queue_num * queue_depth + (__u32)rq->tag;
	s = idx < nr_slots ? bpf_map_lookup_elem(&slots, &idx) : NULL;
	if (!s) {
		stat_inc(KVFDP_STAT_SLOT_OOB);
		return;
	}
	s->sector = sector;
	s->sectors = bytes >> 9;
	s->dev = c->first.dev;
	s->ino = c->first.ino;
	s->cls = c->cls;
	s->source = c->source;
	s->op = op;
	s->flags = c->flags;
	s->writer = writer;
	/* seq last; x86 keeps store order, the barrier keeps the compiler's. */
	asm volatile("" ::: "memory");
	s->seq = __sync_fetch_and_add(&slot_seq, 1) + 1;
}

/* One record of the request on the requests ring buffer (kvfdp record); a full ring drops it
 * and counts the drop. */
static __always_inline void record_request(__u32 devt, __u32 op, __u64 sector, __u32 bytes,
					   const struct rq_class *c, __u32 writer)
{
	struct kvfdp_rq_record *r = bpf_ringbuf_reserve(&requests, sizeof(*r), 0);

	if (!r) {
		stat_inc(KVFDP_STAT_RECORD_DROP);
		return;
	}
	r->t_ns = bpf_ktime_get_ns();
	r->sector = sector;
	r->ino = c->first.ino;
	r->sectors = bytes >> 9;
	r->dev = devt;
	r->op = op;
	r->cls = c->cls;
	r->source = c->source;
	r->flags = c->flags;
	r->writer = writer;
	bpf_ringbuf_submit(r, 0);
}

/* Every write, discard and write-zeroes request issued to a watched disk: its class (the bio's
 * hint, else the walk of its bios), its writer, then the counters, the tag slot and the record
 * as the disk's flags ask. rq is a BTF pointer: the request's fields, its disk's and its first
 * bio's are direct loads (no helper calls); only what hangs off plain numbers is probe-read. */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(kvfdp_rq_issue, struct request *rq)
{
	struct rq_class c = {};
	struct kvfdp_disk *d;
	struct gendisk *disk;
	struct bio *bio;
	__u32 devt, op, bytes, hint, writer = 0;
	__u64 sector;

	/* The op first: reads, flushes and passthrough commands (kvfdpd's own NVMe writes among
	 * them, one per ublk write) leave before the disks lookup. */
	op = rq->cmd_flags & KVFDP_REQ_OP_MASK;
	if (op != KVFDP_REQ_OP_WRITE && op != KVFDP_REQ_OP_DISCARD &&
	    op != KVFDP_REQ_OP_WRITE_ZEROES)
		return 0;
	disk = rq->q->disk;
	if (!disk)
		return 0;
	devt = ((__u32)disk->major << 20) | (__u32)disk->first_minor;
	d = bpf_map_lookup_elem(&disks, &devt);
	if (!d)
		d = learn_disk(disk, devt);
	if (!d)
		return 0;
	stat_inc(KVFDP_STAT_ISSUED);
	bytes = rq->__data_len;
	sector = rq->__sector;
	bio = rq->bio;

	hint = kvfdp_rq_write_hint(rq, bio);
	if (hint) {
		c.cls = hint;
		c.source = KVFDP_SRC_BIO_HINT;
	}
	if (op == KVFDP_REQ_OP_WRITE)
		classify_bios(bio, bytes, &c);
	if (c.source == KVFDP_SRC_DEFAULT)
		c.cls = default_class < KVFDP_NR_CLASSES ? default_class : 0;
	if (c.have_first) {
		__u32 *w = bpf_map_lookup_elem(&inode_writer, &c.first);

		writer = w ? *w : 0;
	}

	count_request(d, op, bytes, &c);
	if (d->flags & KVFDP_DISK_SLOTS)
		fill_slot(rq, op, sector, bytes, &c, writer);
	if (d->flags & KVFDP_DISK_RECORD)
		record_request(devt, op, sector, bytes, &c, writer);
	return 0;
}

/* ---- lifetime events ---- */

static __always_inline struct kvfdp_event *event_reserve(__u32 type, __u32 hook)
{
	struct kvfdp_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(KVFDP_STAT_EVENT_DROP);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->t_ns = bpf_ktime_get_ns();
	e->type = type;
	e->hook = hook;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

/* The current task's open file for fd, or NULL. */
static __always_inline struct file *fd_file(__u64 fd)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *f = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/* A successful F_SET_RW_HINT of hint on fd: a HINT event when fd's file is on a reported
 * filesystem. */
static __always_inline void on_hint(__u64 fd, __u64 hint, __u32 hook)
{
	struct kvfdp_event *e;
	struct inode *inode;
	struct file *f;
	__u32 dev;

	f = fd_file(fd);
	if (!f)
		return;
	inode = BPF_CORE_READ(f, f_inode);
	dev = inode_dev(inode);
	if (!fs_watched(dev))
		return;
	e = event_reserve(KVFDP_EV_HINT, hook);
	if (!e)
		return;
	e->dev = dev;
	e->ino = BPF_CORE_READ(inode, i_ino);
	e->value = (__u32)hint;
	bpf_ringbuf_submit(e, 0);
}

/* fcntl(fd, cmd, arg) on return (x86-64's syscall wrapper; regs holds the caller's arguments):
 * only fcntl calls pay for it. A failed F_SET_RW_HINT (EFAULT, EINVAL: the kernel set no hint)
 * reports nothing. The hint is read back from the caller's u64, which the kernel has just
 * copied. */
SEC("fexit/__x64_sys_fcntl")
int BPF_PROG(kvfdp_fcntl_fexit, const struct pt_regs *regs, long ret)
{
	__u64 hint = 0;

	if (ret != 0 || (__u32)regs->si != KVFDP_F_SET_RW_HINT)
		return 0;
	if (bpf_probe_read_user(&hint, sizeof(hint), (const void *)regs->dx))
		return 0;
	on_hint((__u32)regs->di, hint, KVFDP_HOOK_FENTRY);
	return 0;
}

/* The fallback where fexit is refused or the wrapper is missing: the syscall tracepoints, which
 * switch on syscall tracing for every task (each syscall on the machine then pays for it). The
 * enter keeps (fd, *arg) per thread in fcntl_pending; the exit reports it when fcntl returned 0. */
SEC("tracepoint/syscalls/sys_enter_fcntl")
int kvfdp_fcntl_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct fcntl_args a = {};
	__u64 id;

	if (ctx->args[1] != KVFDP_F_SET_RW_HINT)
		return 0;
	/* The argument is a user pointer to a u64. */
	if (bpf_probe_read_user(&a.hint, sizeof(a.hint), (const void *)ctx->args[2]))
		return 0;
	a.fd = ctx->args[0];
	id = bpf_get_current_pid_tgid();
	bpf_map_update_elem(&fcntl_pending, &id, &a, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_fcntl")
int kvfdp_fcntl_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct fcntl_args *a = bpf_map_lookup_elem(&fcntl_pending, &id);
	__u64 fd, hint;

	if (!a)
		return 0;
	fd = a->fd;
	hint = a->hint;
	bpf_map_delete_elem(&fcntl_pending, &id);
	if (ctx->ret != 0)
		return 0;
	on_hint(fd, hint, KVFDP_HOOK_SYSCALL_TP);
	return 0;
}

/* Where a new file sits: the walk up its ancestors (kvfdp_dir_step). */
struct dir_walk {
	__u64 dentry;  /* the next directory to look at; 0 = done */
	__u64 subtree; /* inode of the nearest directory with a rule or writer, or 0 */
	__u64 child;   /* inode of the directory looked at before dentry (0 at the first) */
	__u64 wdir;    /* the writer directory (kvfdp_event.writer_dir_ino) */
	__u32 dev;
	__u32 cls;    /* the nearest rule's class */
	__u32 writer; /* the nearest writer directory's writer id */
	__u32 found;  /* bit 0: a rule, bit 1: a writer directory, bit 2: the writer directory */
};

#define KVFDP_FOUND_ALL 7

/* One directory of the walk: takes the nearest directory rule, writer directory and identity
 * directory (or, at the filesystem root or an identity root, the child it came from), then
 * steps to the parent (stops at the filesystem root). A global function, checked once by the
 * verifier (like kvfdp_classify_bio). */
__noinline int kvfdp_dir_step(struct dir_walk *w)
{
	struct kvfdp_inode_key k = {};
	struct dentry *d, *p;
	__u32 *v;

	if (!w || !w->dentry)
		return 0;
	d = (struct dentry *)w->dentry;
	k.dev = w->dev;
	k.ino = BPF_CORE_READ(d, d_inode, i_ino);
	p = BPF_CORE_READ(d, d_parent);
	if (!(w->found & 1)) {
		v = bpf_map_lookup_elem(&dir_rules, &k);
		if (v) {
			w->cls = *v;
			w->found |= 1;
			if (!w->subtree)
				w->subtree = k.ino;
		}
	}
	if (!(w->found & 2)) {
		v = bpf_map_lookup_elem(&dir_writers, &k);
		if (v) {
			w->writer = *v;
			w->found |= 2;
			if (!w->subtree)
				w->subtree = k.ino;
		}
	}
	if (!(w->found & 4)) {
		v = bpf_map_lookup_elem(&ident_dirs, &k);
		if (v && *v == KVFDP_IDENT_DIR) {
			w->wdir = k.ino;
			w->found |= 4;
		} else if ((v && *v == KVFDP_IDENT_ROOT) || !p || p == d) {
			w->wdir = w->child; /* 0: the file sits in the root itself */
			w->found |= 4;
		}
	}
	w->child = k.ino;
	w->dentry = (p && p != d && w->found != KVFDP_FOUND_ALL) ? (__u64)p : 0;
	return 0;
}

/* A per-inode map's insert, counted: a new entry (added), or a failed insert. An entry of the
 * same key (an inode number reused under a record no hook removed) is replaced. */
static __always_inline void inode_map_put(void *map, struct kvfdp_inode_key *key, __u32 *val,
					  __u32 added, __u32 failed)
{
	if (bpf_map_update_elem(map, key, val, BPF_NOEXIST) == 0)
		stat_inc(added);
	else if (bpf_map_update_elem(map, key, val, BPF_ANY) != 0)
		stat_inc(failed);
}

/* The creating task's cgroup v2 id, where the kernel has the helper (CO-RE check). */
static __always_inline __u64 current_cgroup(void)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_cgroup_id))
		return bpf_get_current_cgroup_id();
	return 0;
}

/* f was just created (FMODE_CREATED): apply the nearest directory rule of its ancestors, record
 * its writer, and report. f is read with probe reads (an fd's file, or a BTF pointer). */
static __always_inline int on_create(struct file *f, __u32 hook)
{
	struct kvfdp_inode_key key = {};
	struct dir_walk w = {};
	struct kvfdp_event *e;
	struct inode *inode;
	__u64 cg, parent;
	__u32 writer, *named, evflags = 0;

	inode = BPF_CORE_READ(f, f_inode);
	key.dev = inode_dev(inode);
	key.ino = BPF_CORE_READ(inode, i_ino);
	w.dev = key.dev;
	w.dentry = (__u64)BPF_CORE_READ(f, f_path.dentry, d_parent);
	parent = BPF_CORE_READ(f, f_path.dentry, d_parent, d_inode, i_ino);
	for (int i = 0; i < KVFDP_MAX_DIR_DEPTH && w.dentry; i++)
		kvfdp_dir_step(&w);
	if ((w.found & 1) && w.cls < KVFDP_NR_CLASSES)
		inode_map_put(&inode_policy, &key, &w.cls, KVFDP_STAT_POLICY_ADDED,
			      KVFDP_STAT_POLICY_FAILED);
	else if (!(w.found & 3) && !fs_watched(key.dev))
		return 0;
	cg = current_cgroup();
	named = bpf_map_lookup_elem(&writer_cgroups, &cg);
	if (w.found & 2) {
		writer = w.writer;
	} else if (named) {
		writer = *named;
	} else if (cg) {
		struct kvfdp_ident_key ik = {.cgroup_id = cg, .dir_ino = w.wdir, .dev = key.dev};
		struct kvfdp_inode_key dk = {.dev = key.dev, .ino = w.wdir};
		__u32 *ident = bpf_map_lookup_elem(&writer_idents, &ik);

		if (ident) {
			stat_inc(KVFDP_STAT_IDENT_HIT);
		} else if ((ident = bpf_map_lookup_elem(&dir_idents, &dk))) {
			stat_inc(KVFDP_STAT_IDENT_PROVISIONAL);
			evflags |= KVFDP_EVF_PROVISIONAL;
		}
		writer = ident ? *ident : kvfdp_writer_of_cgroup(cg);
	} else {
		writer = 0;
	}
	if (writer)
		inode_map_put(&inode_writer, &key, &writer, KVFDP_STAT_WRITER_ADDED,
			      KVFDP_STAT_WRITER_FAILED);
	e = event_reserve(KVFDP_EV_CREATE, hook);
	if (!e)
		return 0;
	e->dev = key.dev;
	e->ino = key.ino;
	e->parent_ino = parent;
	e->value = (w.found & 1) && w.cls < KVFDP_NR_CLASSES ? w.cls : KVFDP_NO_CLASS;
	e->writer = writer;
	e->cgroup_id = cg;
	e->subtree_ino = w.subtree;
	e->writer_dir_ino = w.wdir;
	e->flags = evflags;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Every open on the machine, inside do_dentry_open, before the filesystem's open: a file the
 * open created already has FMODE_CREATED and its path. Only opens pay for it (one load of
 * f_mode for a file that existed), and io_uring's IORING_OP_OPENAT is seen too. */
SEC("fentry/security_file_open")
int BPF_PROG(kvfdp_file_open, struct file *file)
{
	if (!(file->f_mode & fmode_created))
		return 0;
	return on_create(file, KVFDP_HOOK_FENTRY);
}

/* The fallback (syscall tracepoints, see kvfdp_fcntl_enter): after a successful open, its fd's
 * file if the open created it. */
static __always_inline int on_open_exit(long ret)
{
	struct file *f;

	if (ret < 0)
		return 0;
	f = fd_file(ret);
	if (!f || !(BPF_CORE_READ(f, f_mode) & fmode_created))
		return 0;
	return on_create(f, KVFDP_HOOK_SYSCALL_TP);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int kvfdp_openat_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_open_exit(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int kvfdp_openat2_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_open_exit(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_open")
int kvfdp_open_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_open_exit(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_creat")
int kvfdp_creat_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_open_exit(ctx->ret);
}

/* A link of inode is being removed. */
static __always_inline void on_unlink(struct inode *inode, __u32 hook)
{
	struct kvfdp_inode_key key = {};
	struct kvfdp_event *e;
	__u64 *bytes;
	__u32 nlink;
	bool policy;

	if (!inode)
		return;
	key.dev = inode_dev(inode);
	key.ino = BPF_CORE_READ(inode, i_ino);
	policy = bpf_map_lookup_elem(&inode_policy, &key) != NULL;
	if (!policy && !fs_watched(key.dev))
		return;
	nlink = BPF_CORE_READ(inode, i_nlink);
	e = event_reserve(KVFDP_EV_UNLINK, hook);
	if (!e)
		return;
	bytes = bpf_map_lookup_elem(&inode_bytes, &key);
	e->dev = key.dev;
	e->ino = key.ino;
	e->value = nlink;
	e->bytes = bytes ? *bytes : 0;
	bpf_ringbuf_submit(e, 0);
	if (nlink <= 1) {
		if (bpf_map_delete_elem(&inode_policy, &key) == 0)
			stat_inc(KVFDP_STAT_POLICY_REMOVED);
		bpf_map_delete_elem(&inode_bytes, &key);
		if (bpf_map_delete_elem(&inode_writer, &key) == 0)
			stat_inc(KVFDP_STAT_WRITER_REMOVED);
	}
}

SEC("lsm/inode_unlink")
int BPF_PROG(kvfdp_lsm_unlink, struct inode *dir, struct dentry *dentry, int ret)
{
	on_unlink(BPF_CORE_READ(dentry, d_inode), KVFDP_HOOK_LSM);
	return ret; /* never decides: keep what earlier programs returned */
}

/* vfs_unlink(idmap or user_ns, dir, dentry, delegated): dentry is the third argument. */
SEC("kprobe/vfs_unlink")
int BPF_KPROBE(kvfdp_kprobe_unlink, void *idmap, struct inode *dir, struct dentry *dentry)
{
	on_unlink(BPF_CORE_READ(dentry, d_inode), KVFDP_HOOK_KPROBE);
	return 0;
}

/* RENAME_EXCHANGE (include/uapi/linux/fs.h): both names stay, nothing is replaced. */
#define KVFDP_RENAME_EXCHANGE 2

/* vfs_rename(struct renamedata *rd) (5.12+; CO-RE: older kernels have no struct renamedata and
 * the program does nothing): a rename onto an existing name drops that file's link, as an
 * unlink would. Without it a create + rename loop would leave every replaced file in the
 * per-inode maps (they are LRU, so that costs old entries, never a new file's rule). */
SEC("kprobe/vfs_rename")
int BPF_KPROBE(kvfdp_kprobe_rename, void *rd)
{
	struct renamedata *r = rd;
	struct inode *target;

	if (!bpf_core_type_exists(struct renamedata) ||
	    !bpf_core_field_exists(struct renamedata, new_dentry))
		return 0;
	if (BPF_CORE_READ(r, flags) & KVFDP_RENAME_EXCHANGE)
		return 0;
	target = BPF_CORE_READ(r, new_dentry, d_inode);
	if (!target)
		return 0;
	stat_inc(KVFDP_STAT_RENAME_OVER);
	on_unlink(target, KVFDP_HOOK_KPROBE);
	return 0;
}

/* Filesystem tracepoints, where neither hook above is allowed. Raw tracepoints: they load
 * without the filesystem's BTF and attach only where the filesystem is present. */

/* ext4_unlink_enter(struct inode *parent, struct dentry *dentry): every ext4 unlink. */
SEC("raw_tp/ext4_unlink_enter")
int kvfdp_ext4_unlink(struct bpf_raw_tracepoint_args *ctx)
{
	struct dentry *dentry = (void *)ctx->args[1];

	on_unlink(BPF_CORE_READ(dentry, d_inode), KVFDP_HOOK_FS_TP);
	return 0;
}

/* xfs_iunlink(struct xfs_inode *ip): the last link is gone (i_nlink is already 0). */
SEC("raw_tp/xfs_iunlink")
int kvfdp_xfs_iunlink(struct bpf_raw_tracepoint_args *ctx)
{
	if (!xfs_vnode_off)
		return 0;
	on_unlink((struct inode *)(ctx->args[0] + xfs_vnode_off), KVFDP_HOOK_FS_TP);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
