// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The tagger's bio walk (tagger.bpf.c includes this once, after tagger_maps.bpf.h): from a
 * request's bios to the inodes whose data they carry (page cache or direct I/O, following a
 * split bio to its parent), with each inode's bytes and, where no source decided yet, its
 * policy or write hint.
 */
#ifndef KVFDP_TAGGER_BIO_BPF_H
#define KVFDP_TAGGER_BIO_BPF_H

#define KVFDP_PAGE_SHIFT 12
/* Parents followed from a split bio to the one the filesystem submitted. */
#define KVFDP_MAX_CHAIN 4

/* The fields of one bio that the walk reads, taken up front: straight from the BTF pointer for a
 * request's first bio (kvfdp_rq_issue), with probe reads for the bios merged after it
 * (kvfdp_classify_bio, where the pointer is only a number). */
struct bio_fields {
	__u64 bio;    /* the bio; 0 = none left */
	__u64 next;   /* bi_next */
	__u64 end_io; /* bi_end_io */
	__u64 priv;   /* bi_private */
	__u64 io_vec; /* bi_io_vec */
	__u64 page;   /* the current bvec's bv_page, when have_bvec */
	__u32 size;   /* bi_iter.bi_size */
	__u32 idx;    /* bi_iter.bi_idx */
	__u32 done;   /* bi_iter's bytes done in the current bvec */
	__u32 bv_offset;
	__u8 have_bvec; /* page and bv_offset are read (the first bvec of a first bio) */
	__u8 pad[7];
};

/* bio's fields through direct loads: bio is a BTF pointer (tp_btf's request and what hangs off
 * it), so each field is one load, with no helper call. The current bvec (an array element at a
 * variable index) is read here only when it is the first. */
static __always_inline void bio_fields_direct(struct bio *bio, struct bio_fields *f)
{
	struct bio_vec *bv;

	f->bio = (__u64)bio;
	if (!bio)
		return;
	f->next = (__u64)bio->bi_next;
	f->end_io = (__u64)bio->bi_end_io;
	f->priv = (__u64)bio->bi_private;
	bv = bio->bi_io_vec;
	f->io_vec = (__u64)bv;
	f->size = bio->bi_iter.bi_size;
	f->idx = bio->bi_iter.bi_idx;
	f->done = kvfdp_bio_bvec_done_direct(bio);
	if (bv && f->idx == 0) {
		f->page = (__u64)bv->bv_page;
		f->bv_offset = bv->bv_offset;
		f->have_bvec = 1;
	}
}

/* The same through probe reads: bio is an address read from another bio's bi_next. */
static __always_inline void bio_fields_probe(struct bio *bio, struct bio_fields *f)
{
	f->bio = (__u64)bio;
	f->have_bvec = 0;
	if (!bio)
		return;
	f->next = (__u64)BPF_CORE_READ(bio, bi_next);
	f->end_io = (__u64)BPF_CORE_READ(bio, bi_end_io);
	f->priv = (__u64)BPF_CORE_READ(bio, bi_private);
	f->io_vec = (__u64)BPF_CORE_READ(bio, bi_io_vec);
	f->size = BPF_CORE_READ(bio, bi_iter.bi_size);
	f->idx = BPF_CORE_READ(bio, bi_iter.bi_idx);
	f->done = kvfdp_bio_bvec_done(bio);
}

/* The inode whose data the bio of f carries, or NULL (metadata without a mapping, unknown DIO). */
static __always_inline struct inode *bio_inode(const struct bio_fields *f, __u8 *how)
{
	__u64 end = f->end_io, priv = f->priv, m;
	struct bio_vec *bv;
	struct page *pg;
	__u32 off;

	/* iomap direct I/O: bi_private is the iomap_dio, whose iocb names the file. The user
	 * pages are anonymous (or another file's), so check this before the page. A split's
	 * front part ends into its parent (bio_chain, bi_private): follow up to KVFDP_MAX_CHAIN
	 * parents. */
	for (int i = 0; i < KVFDP_MAX_CHAIN && chain_end_io && end == chain_end_io && priv; i++) {
		struct bio *parent = (struct bio *)priv;

		end = (__u64)BPF_CORE_READ(parent, bi_end_io);
		priv = (__u64)BPF_CORE_READ(parent, bi_private);
	}
	if (dio_end_io && priv && end == dio_end_io) {
		struct iomap_dio *dio = (struct iomap_dio *)priv;

		*how = KVFDP_SLOT_F_DIO;
		return BPF_CORE_READ(dio, iocb, ki_filp, f_inode);
	}
	if (!f->io_vec)
		return NULL;
	if (f->have_bvec) {
		pg = (struct page *)f->page;
		off = f->bv_offset;
	} else {
		/* The current bvec per bi_iter: split bios have bi_vcnt == 0 and share the
		 * parent's vector, so bi_io_vec[0] is not necessarily theirs. */
		bv = (struct bio_vec *)f->io_vec + f->idx;
		pg = BPF_CORE_READ(bv, bv_page);
		off = BPF_CORE_READ(bv, bv_offset);
	}
	off += f->done;
	if (off >> KVFDP_PAGE_SHIFT) /* multi-page bvec: the page the iterator is at */
		pg = (struct page *)((unsigned long)pg +
				     (off >> KVFDP_PAGE_SHIFT) * bpf_core_type_size(struct page));
	if (!pg)
		return NULL;
	m = kvfdp_folio_mapping(pg);
	/* Low bits set: anonymous / movable / KSM, not a file's page cache. */
	if (!m || (m & 3))
		return NULL;
	*how = KVFDP_SLOT_F_PAGE;
	return BPF_CORE_READ((struct address_space *)m, host);
}

static __always_inline void add_inode_bytes(struct kvfdp_inode_key *key, __u64 bytes)
{
	__u64 *v = bpf_map_lookup_elem(&inode_bytes, key);

	if (v) {
		__sync_fetch_and_add(v, bytes);
		return;
	}
	bpf_map_update_elem(&inode_bytes, key, &bytes, BPF_NOEXIST);
}

/* What classify_bios found, and where its walk is. */
struct rq_class {
	struct kvfdp_inode_key first;
	struct bio_fields f; /* the next bio to walk (f.bio 0: done) */
	__u64 walked;        /* bytes of the bios walked */
	__u32 cls;
	__u32 source;
	__u8 flags;
	__u8 have_first;
	__u8 pad[6];
};

/* One bio of the walk (c->f): attributes its bytes to its inode and, when no source has
 * decided the class yet, takes it from the inode's policy or i_write_hint; then reads the
 * fields of bi_next into c->f. A global function, so the verifier checks it once instead of
 * once per loop iteration with every path of the caller (6.1's verifier gave up on the
 * unrolled walk: E2BIG, "program too large"). Its argument is plain memory, so the bios after
 * the first are read with probe reads. */
__noinline int kvfdp_classify_bio(struct rq_class *c)
{
	struct kvfdp_inode_key key = {};
	struct inode *inode;
	__u8 how = 0;
	__u32 bsz;

	if (!c || !c->f.bio)
		return 0;
	bsz = c->f.size;
	c->walked += bsz;
	inode = bio_inode(&c->f, &how);
	bio_fields_probe((struct bio *)c->f.next, &c->f);
	if (!inode) {
		stat_inc(KVFDP_STAT_INODE_NONE);
		return 0;
	}
	stat_inc(how == KVFDP_SLOT_F_DIO ? KVFDP_STAT_INODE_DIO : KVFDP_STAT_INODE_PAGE);
	key.dev = inode_dev(inode);
	key.ino = BPF_CORE_READ(inode, i_ino);
	c->flags |= how;
	if (!c->have_first) {
		c->first = key;
		c->have_first = 1;
	} else if (key.ino != c->first.ino || key.dev != c->first.dev) {
		c->flags |= KVFDP_SLOT_F_MULTI;
	}
	add_inode_bytes(&key, bsz);
	if (c->source == KVFDP_SRC_DEFAULT) {
		__u32 *pcls = bpf_map_lookup_elem(&inode_policy, &key);
		__u32 h;

		if (pcls && *pcls < KVFDP_NR_CLASSES) {
			c->cls = *pcls;
			c->source = KVFDP_SRC_INODE_POLICY;
		} else if ((h = kvfdp_inode_write_hint(inode))) {
			c->cls = h;
			c->source = KVFDP_SRC_INODE_HINT;
		}
	}
	return 0;
}

/* Walks up to KVFDP_MAX_BIOS bios from bio, rq's first (kvfdp_classify_bio); bytes of bios
 * beyond the bound go to the first inode. */
static __always_inline void classify_bios(struct bio *bio, __u32 rq_bytes, struct rq_class *c)
{
	bio_fields_direct(bio, &c->f);
	for (int i = 0; i < KVFDP_MAX_BIOS && c->f.bio; i++)
		kvfdp_classify_bio(c);
	if (c->have_first && rq_bytes > c->walked)
		add_inode_bytes(&c->first, rq_bytes - c->walked);
}

#endif /* KVFDP_TAGGER_BIO_BPF_H */
