// Context: the C API's calls as jobs (evict, load, batch, prefetch) and the calls answered
// without the worker (lookup, remove, stats); opening and closing a store directory.
#include "kvgpu/context.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "kvgpu/chunk_format.hpp"
#include "kvgpu/errors.hpp"

namespace kvfdp::gpu {

int Context::create(const char *dir, const kvgpu_options &opts, std::unique_ptr<Context> *out)
{
	uint64_t t0 = now_ns();
	std::unique_ptr<Context> c(new (std::nothrow) Context());
	if (!c)
		return KVGPU_ERR_NOMEM;
	if (int rc = c->init(dir, opts); rc < 0)
		return rc;
	c->c_.open_ns.store(now_ns() - t0, std::memory_order_relaxed);
	*out = std::move(c);
	return 0;
}

int Context::init(const char *dir, const kvgpu_options &opts)
{
	opts_ = opts;
	dir_.reset(::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!dir_ || ::faccessat(dir_.get(), ".", W_OK | X_OK, AT_EACCESS) != 0)
		return KVGPU_ERR_DIR;
	if (opts_.capacity_bytes == 0)
		remove_stale_temps();  // a bounded store does it in its one directory scan
	if (int rc = probe_direct(); rc < 0)
		return rc;
	if (opts_.capacity_bytes > 0)
		if (int rc = open_store(); rc < 0)
			return rc;
	jobs_.init(opts_.max_jobs);
	cache_.init(opts_.prefetch_slots);
	if (int rc = pipeline_.init(dir_.get(), dir_direct_, store_.get()); rc < 0)
		return rc;
	if (int rc = reader_.init(dir_.get(), dir_direct_, &c_); rc < 0)
		return rc;
	pipeline_.start();
	return 0;
}

int Context::open_store()
{
	store_.reset(new (std::nothrow) StoreIndex());
	if (!store_)
		return KVGPU_ERR_NOMEM;
	StoreConfig sc;
	sc.capacity = opts_.capacity_bytes;
	sc.policy = opts_.evict_policy;
	sc.reinsert_hits = opts_.reinsert_hits;
	sc.durable = opts_.durability == KVGPU_DURABLE_FSYNC;
	sc.direct = dir_direct_;
	sc.inline_unlink = opts_.reclaim == KVGPU_RECLAIM_INLINE;
	if (int rc = store_->open(dir_.get(), sc); rc < 0)
		return rc;
	c_.stale_temps.store(store_->stale_temps(), std::memory_order_relaxed);
	return 0;
}

Context::~Context()
{
	if (pipeline_.running())
		(void)shutdown();
	if (store_)
		store_->close();  // its reclaimer's last unlinks, before the directory fd goes
}

int Context::shutdown()
{
	jobs_.stop();
	pipeline_.wake();
	pipeline_.join();
	return jobs_.unwaited_error();
}

int Context::remove_stale_temps()
{
	UniqueFd dup(::fcntl(dir_.get(), F_DUPFD_CLOEXEC, 0));
	if (!dup)
		return -errno;
	DIR *d = ::fdopendir(dup.get());
	if (!d)
		return -errno;
	(void)dup.release();  // the DIR owns it now
	while (dirent *e = ::readdir(d)) {
		// Only temp files whose writer is gone: another live process may share the directory.
		if (!is_stale_temp(e->d_name))
			continue;
		if (::unlinkat(dir_.get(), e->d_name, 0) == 0)
			c_.stale_temps.fetch_add(1, std::memory_order_relaxed);
	}
	::closedir(d);
	return 0;
}

int Context::probe_direct()
{
	dir_direct_ = false;
	if (opts_.direct_io == KVGPU_DIRECT_OFF)
		return 0;
	std::string name = temp_name(::getpid(), ~0ull);
	UniqueFd fd(::openat(dir_.get(), name.c_str(),
			     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0600));
	if (fd) {
		void *block = std::aligned_alloc(kBlock, kBlock);
		if (block) {
			std::memset(block, 0, kBlock);
			// Some filesystems accept O_DIRECT at open and refuse the I/O: try one block.
			dir_direct_ = ::pwrite(fd.get(), block, kBlock, 0) ==
				      static_cast<ssize_t>(kBlock);
			std::free(block);
		}
		fd.reset();
		::unlinkat(dir_.get(), name.c_str(), 0);
	} else {
		int e = errno;
		// The create may have happened before O_DIRECT was refused (ramfs): remove it.
		::unlinkat(dir_.get(), name.c_str(), 0);
		if (e != EINVAL)
			return errno_to_kvgpu(e) == KVGPU_ERR_PERM ? KVGPU_ERR_DIR
								   : errno_to_kvgpu(e);
	}
	if (!dir_direct_ && opts_.direct_io == KVGPU_DIRECT_ON)
		return KVGPU_ERR_DIRECT;
	return 0;
}

void Context::publish_job(unsigned idx)
{
	jobs_.publish(idx);
	pipeline_.wake();
}

int64_t Context::evict(const void *src, size_t bytes, std::string_view key, int lifetime,
		       void *stream)
{
	uint64_t reserved = 0;
	if (store_) {
		// Room first (evicting by policy), so the file never takes the store past its capacity.
		std::unique_lock lock(store_->mu());
		if (int rc = store_->reserve(file_bytes(bytes), lock); rc < 0)
			return rc;
		reserved = file_bytes(bytes);
	}
	forget_prefetch(key);
	unsigned idx = 0;
	int64_t ticket = 0;
	if (int rc = jobs_.reserve(Kind::evict, &idx, &ticket, true); rc < 0) {
		if (store_) {
			std::lock_guard lock(store_->mu());
			store_->unreserve(reserved);
		}
		return rc;
	}
	Job &j = jobs_.job(idx);
	j.reserved = reserved;
	j.src = static_cast<const char *>(src);
	j.dst = nullptr;
	j.bytes = bytes;
	j.lifetime = lifetime;
	j.key_len = static_cast<uint32_t>(key.size());
	std::memcpy(j.key, key.data(), key.size());
	j.key[key.size()] = '\0';
	j.fd.reset();
	if (int rc = pipeline_.engine().mark_source(idx, stream); rc < 0) {
		if (store_) {
			std::lock_guard lock(store_->mu());
			store_->unreserve(reserved);
		}
		jobs_.release_reserved(idx);
		return rc;
	}
	publish_job(idx);
	return ticket;
}

void Context::open_batch(size_t n, const char *const *keys, const int *arg_rc, OpenChunk *pre,
			 int *pre_rc, uint64_t *pre_seq)
{
	// Open the files the loads will read (a key the index lacks, or one staged by prefetch, is
	// left to start_load: no I/O), then read their headers together: one io_uring submission
	// instead of one synchronous pread per chunk, so a batch waits one device latency for its
	// headers, not n.
	size_t opened = 0;
	for (size_t i = 0; i < n; i++) {
		pre[i] = OpenChunk{};
		pre_rc[i] = 1;  // 1: not opened here
		pre_seq[i] = 0;
		if (arg_rc[i] < 0)
			continue;
		std::string_view key(keys[i], ::strlen(keys[i]));
		if (store_) {
			// The version before the open: start_load trusts this open (and its error) only
			// while the key still has it; a replaced or re-put key is opened again there.
			std::lock_guard lock(store_->mu());
			const StoreEntry *e = store_->find(key);
			if (!e)
				continue;
			pre_seq[i] = e->seq;
		}
		if (!cache_.empty()) {
			std::lock_guard lock(jobs_.mu());
			if (cache_.holds(key))
				continue;
		}
		pre_rc[i] = reader_.open_file(key, &pre[i]);
		opened += pre_rc[i] == 0;
	}
	if (opened == 0)
		return;
	reader_.read_headers(n, keys, pre, pre_rc);
}

int64_t Context::lookup(std::string_view key)
{
	if (store_) {
		std::lock_guard lock(store_->mu());
		const StoreEntry *e = store_->find(key);
		return e ? static_cast<int64_t>(e->payload_bytes) : int64_t(KVGPU_ERR_NOT_FOUND);
	}
	OpenChunk oc;
	if (int rc = reader_.open_chunk(key, &oc); rc < 0)
		return rc;
	return static_cast<int64_t>(oc.header.payload_bytes);
}

int Context::contains(std::string_view key)
{
	int64_t r = lookup(key);
	if (r == KVGPU_ERR_NOT_FOUND)
		return 0;
	return r < 0 ? static_cast<int>(r) : 1;
}

int Context::remove(std::string_view key)
{
	forget_prefetch(key);
	if (store_) {
		std::lock_guard lock(store_->mu());
		int rc = store_->remove(key);
		if (rc == 0)
			c_.removes.fetch_add(1, std::memory_order_relaxed);
		return rc;
	}
	FileName name;
	key_to_name(key, &name);
	if (name.str[0] == 'h') {
		// A hashed name may belong to another key: unlink only a chunk of this key (or a corrupt one).
		OpenChunk oc;
		int rc = reader_.open_chunk(key, &oc);
		if (rc == KVGPU_ERR_NOT_FOUND)
			return rc;
	}
	if (::unlinkat(dir_.get(), name.c_str(), 0) != 0)
		return errno == ENOENT ? KVGPU_ERR_NOT_FOUND : errno_to_kvgpu(errno);
	c_.removes.fetch_add(1, std::memory_order_relaxed);
	return 0;
}

void Context::forget_prefetch(std::string_view key)
{
	if (cache_.empty())
		return;
	std::lock_guard lock(jobs_.mu());
	cache_.forget(key);
}

void Context::read_job(Job &j, OpenChunk &&oc, char *dst)
{
	j.src = nullptr;
	j.dst = dst;
	j.bytes = oc.header.payload_bytes;
	j.lifetime = static_cast<int>(oc.header.lifetime);
	j.fd = std::move(oc.fd);
	j.direct = oc.direct;
	j.check_crc = opts_.checksum && (oc.header.flags & kFlagChecksum);
	j.stored_crc = oc.header.payload_crc;
}

int Context::start_load(std::string_view key, void *dst, size_t bytes, void *stream, int batch,
			uint32_t pos, int64_t *ticket, uint64_t *len, OpenChunk *pre, int pre_rc,
			uint64_t pre_seq)
{
	// pre: the chunk already opened and checked by open_batch (pre_rc 0), or its error; 1: not.
	auto drop_pre = [&] {
		if (pre_rc == 0)
			pre->fd.reset();
		pre_rc = 1;
	};
	uint64_t seq = 0, indexed_bytes = 0;
	if (store_) {
		// The index answers a miss without touching the disk.
		std::lock_guard lock(store_->mu());
		const StoreEntry *e = store_->find(key);
		if (!e) {
			store_->miss();
			drop_pre();
			return KVGPU_ERR_NOT_FOUND;
		}
		indexed_bytes = e->payload_bytes;
		seq = store_->hit(e);
		// Opened before this version was published (evicted and put again, or replaced since):
		// its result describes an older file, and drop/correct below act on seq, the newer one.
		if (pre_rc != 1 && seq != pre_seq)
			drop_pre();
	}
	// A staged chunk: copy it from its prefetch slot, no read.
	uint64_t staged_bytes = 0;
	int staged = claim_staged(key, bytes, &staged_bytes);
	unsigned idx = 0;
	if (staged >= 0) {
		drop_pre();
		if (int rc =
			    reserve_staged_load(staged, staged_bytes, dst, batch < 0, &idx, ticket);
		    rc < 0)
			return rc;
	} else if (int rc = reserve_read_load(key, dst, bytes, batch < 0, pre, pre_rc, seq,
					      indexed_bytes, &idx, ticket);
		   rc < 0) {
		return rc;
	}
	Job &j = jobs_.job(idx);
	if (store_) {
		// To drop it from the index if its payload turns out damaged.
		j.store_seq = seq;
		j.key_len = static_cast<uint32_t>(key.size());
		std::memcpy(j.key, key.data(), key.size());
		j.key[key.size()] = '\0';
	}
	j.batch = batch;
	j.batch_pos = pos;
	*len = j.bytes;
	if (int rc = pipeline_.engine().mark_source(idx, stream); rc < 0) {
		j.fd.reset();
		if (staged >= 0) {
			std::lock_guard lock(jobs_.mu());
			cache_.release(staged);
		}
		jobs_.release_reserved(idx);
		return rc;
	}
	publish_job(idx);
	return 0;
}

int Context::claim_staged(std::string_view key, size_t bytes, uint64_t *staged_bytes)
{
	int staged = -1;
	for (int tries = 0; tries < 2 && !cache_.empty(); tries++) {
		int64_t wait_for = 0;
		{
			std::lock_guard lock(jobs_.mu());
			staged = cache_.claim(key, bytes, staged_bytes, &wait_for);
		}
		if (staged >= 0 || wait_for == 0)
			break;
		(void)jobs_.wait(
			wait_for);  // the prefetch is in flight: its read is the one to wait for
	}
	return staged;
}

int Context::reserve_staged_load(int staged, uint64_t staged_bytes, void *dst, bool tracked,
				 unsigned *idx, int64_t *ticket)
{
	if (int rc = jobs_.reserve(Kind::load, idx, ticket, tracked); rc < 0) {
		std::lock_guard lock(jobs_.mu());
		cache_.release(staged);
		return rc;
	}
	Job &j = jobs_.job(*idx);
	j.src = nullptr;
	j.dst = static_cast<char *>(dst);
	j.bytes = staged_bytes;
	j.fd.reset();
	j.direct = false;
	j.check_crc = false;  // verified when it was staged
	j.pslot = static_cast<int>(opts_.slots) + staged;
	j.pentry = staged;
	c_.prefetch_hits.fetch_add(1, std::memory_order_relaxed);
	return 0;
}

int Context::reserve_read_load(std::string_view key, void *dst, size_t bytes, bool tracked,
			       OpenChunk *pre, int pre_rc, uint64_t seq, uint64_t indexed_bytes,
			       unsigned *idx, int64_t *ticket)
{
	OpenChunk oc;
	int orc = pre_rc <= 0 ? pre_rc : reader_.open_chunk(key, &oc);
	if (pre_rc == 0)
		oc = std::move(*pre);
	if (int rc = orc; rc < 0) {
		c_.load_errors.fetch_add(1, std::memory_order_relaxed);
		if (store_ && (rc == KVGPU_ERR_NOT_FOUND || rc == KVGPU_ERR_CORRUPT)) {
			std::lock_guard lock(store_->mu());
			store_->drop(key, seq);
		}
		return rc;
	}
	if (store_ && oc.header.payload_bytes != indexed_bytes) {
		std::lock_guard lock(store_->mu());
		store_->correct(key, seq, oc.header.payload_bytes, oc.header.payload_crc);
	}
	if (bytes < oc.header.payload_bytes) {
		oc.fd.reset();
		c_.load_errors.fetch_add(1, std::memory_order_relaxed);
		return KVGPU_ERR_SIZE;
	}
	if (int rc = jobs_.reserve(Kind::load, idx, ticket, tracked); rc < 0)
		return rc;  // oc closes its file
	read_job(jobs_.job(*idx), std::move(oc), static_cast<char *>(dst));
	return 0;
}

int64_t Context::load(std::string_view key, void *dst, size_t bytes, void *stream)
{
	int64_t ticket = 0;
	uint64_t n = 0;
	if (int rc = start_load(key, dst, bytes, stream, -1, 0, &ticket, &n); rc < 0)
		return rc;
	int rc = jobs_.wait(ticket);
	return rc < 0 ? rc : static_cast<int64_t>(n);
}

int64_t Context::load_batch(size_t n, const char *const *keys, void *const *dsts,
			    const size_t *sizes, int64_t *results, void *stream)
{
	int64_t bt = 0;
	int b = 0;
	if (int rc = jobs_.begin_batch(results, &bt, &b); rc < 0)
		return rc;
	c_.batches.fetch_add(1, std::memory_order_relaxed);
	// In groups of kHeaderReads: the group's headers are read together, then its loads queued
	// (the worker starts on the first while the next group's headers are read).
	int arg_rc[kHeaderReads], pre_rc[kHeaderReads];
	uint64_t pre_seq[kHeaderReads];
	OpenChunk pre[kHeaderReads];
	for (size_t i = 0; i < n; i++) {
		const char *k = keys[i];
		size_t klen = k ? ::strnlen(k, KVGPU_MAX_KEY + 1) : 0;
		size_t g = i % kHeaderReads;
		if (g == 0) {
			size_t m = std::min(n - i, kHeaderReads);
			open_group(m, keys + i, dsts + i, sizes + i, arg_rc, pre, pre_rc, pre_seq);
			if (batch_opened_)
				batch_opened_(batch_opened_arg_);
		}
		int rc = arg_rc[g];
		if (rc == 0) {
			jobs_.batch_enter(b);
			int64_t t = 0;
			uint64_t len = 0;
			rc = start_load(std::string_view(k, klen), dsts[i], sizes[i], stream, b,
					uint32_t(i), &t, &len, &pre[g], pre_rc[g], pre_seq[g]);
			if (rc == 0)
				continue;
			jobs_.batch_leave(b);
		}
		jobs_.batch_fail(b, i, rc);
	}
	jobs_.batch_close(b);
	return bt;
}

void Context::open_group(size_t m, const char *const *keys, void *const *dsts, const size_t *sizes,
			 int *arg_rc, OpenChunk *pre, int *pre_rc, uint64_t *pre_seq)
{
	for (size_t q = 0; q < m; q++) {
		const char *kq = keys[q];
		size_t lq = kq ? ::strnlen(kq, KVGPU_MAX_KEY + 1) : 0;
		arg_rc[q] = !kq || !dsts[q]                 ? KVGPU_ERR_INVAL
			    : lq == 0 || lq > KVGPU_MAX_KEY ? KVGPU_ERR_KEY
			    : sizes[q] == 0                 ? KVGPU_ERR_SIZE
							    : 0;
	}
	open_batch(m, keys, arg_rc, pre, pre_rc, pre_seq);
}

int Context::prefetch(size_t n, const char *const *keys)
{
	for (size_t i = 0; i < n; i++) {
		size_t klen = keys[i] ? ::strnlen(keys[i], KVGPU_MAX_KEY + 1) : 0;
		if (!keys[i])
			return KVGPU_ERR_INVAL;
		if (klen == 0 || klen > KVGPU_MAX_KEY)
			return KVGPU_ERR_KEY;
	}
	int count = 0;
	uint64_t start_gen = 0;  // entries staged by this call are not replaced by its later keys
	{
		std::lock_guard lock(jobs_.mu());
		start_gen = cache_.gen();
	}
	for (size_t i = 0; i < n && !cache_.empty(); i++)
		if (!prefetch_one(std::string_view(keys[i], ::strlen(keys[i])), start_gen, &count))
			break;
	return count;
}

bool Context::prefetch_one(std::string_view key, uint64_t start_gen, int *count)
{
	if (store_) {
		std::lock_guard lock(store_->mu());
		if (!store_->find(key))
			return true;  // not stored: nothing to read
	}
	int p = -1;
	{
		std::lock_guard lock(jobs_.mu());
		bool have = false;
		p = cache_.pick(key, start_gen, &have);
		if (have) {
			(*count)++;
			return true;
		}
		if (p < 0)
			return false;  // every buffer is being read or copied
	}
	OpenChunk oc;
	int rc = reader_.open_chunk(key, &oc);
	if (rc == 0 && oc.header.payload_bytes > opts_.slot_bytes) {
		oc.fd.reset();
		rc = KVGPU_ERR_SIZE;  // larger than a buffer: loads read it as usual
	}
	unsigned idx = 0;
	int64_t ticket = 0;
	if (rc == 0)
		rc = jobs_.reserve(Kind::prefetch, &idx, &ticket,
				   false);  // on failure oc closes its file
	if (rc < 0) {
		std::lock_guard lock(jobs_.mu());
		cache_.release(p);
		return true;
	}
	Job &j = jobs_.job(idx);
	read_job(j, std::move(oc), nullptr);
	j.pslot = static_cast<int>(opts_.slots) + p;
	j.pentry = p;
	{
		std::lock_guard lock(jobs_.mu());
		cache_.set_read(p, ticket, j.bytes);
	}
	publish_job(idx);
	c_.prefetches.fetch_add(1, std::memory_order_relaxed);
	(*count)++;
	return true;
}

void Context::stats(kvgpu_stats_t *out)
{
	std::memset(out, 0, sizeof(*out));
	auto rd = [](const std::atomic<uint64_t> &a) { return a.load(std::memory_order_relaxed); };
	out->evicts = rd(c_.evicts);
	out->evict_bytes = rd(c_.evict_bytes);
	out->evict_errors = rd(c_.evict_errors);
	out->loads = rd(c_.loads);
	out->load_bytes = rd(c_.load_bytes);
	out->load_errors = rd(c_.load_errors);
	out->removes = rd(c_.removes);
	out->checksum_failures = rd(c_.checksum_failures);
	out->direct_files = rd(c_.direct_files);
	out->buffered_files = rd(c_.buffered_files);
	out->hint_failures = rd(c_.hint_failures);
	out->writes = rd(c_.writes);
	out->reads = rd(c_.reads);
	out->max_io_in_flight = rd(c_.max_io);
	out->max_copies_in_flight = rd(c_.max_copies);
	out->stale_temps_removed = rd(c_.stale_temps);
	out->direct_io = dir_direct_ ? 1 : 0;
	out->engine = pipeline_.engine_kind();
	out->last_errno = c_.last_errno.load(std::memory_order_relaxed);
	out->batches = rd(c_.batches);
	out->prefetches = rd(c_.prefetches);
	out->prefetch_hits = rd(c_.prefetch_hits);
	out->open_ns = rd(c_.open_ns);
	if (store_) {
		std::lock_guard lock(store_->mu());
		store_->stats(out);
	}
}

}  // namespace kvfdp::gpu
