// The pipeline: caller threads queue jobs; one worker thread moves each job's pieces through
// the staging ring (copy engine <-> staging <-> io_uring) and publishes evicts by rename.
#include "kvgpu/context.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "bpf/tag.h"
#include "kvgpu/crc32c.hpp"
#include "kvgpu/errors.hpp"


// kvgpu.h stands alone for C callers; its lifetimes are the tagger's classes (both RWH values).
static_assert(int(KVGPU_LIFETIME_NOT_SET) == int(KVFDP_CLASS_NOT_SET) && int(KVGPU_LIFETIME_NONE) == int(KVFDP_CLASS_NONE) &&
		      int(KVGPU_LIFETIME_SHORT) == int(KVFDP_CLASS_SHORT) &&
		      int(KVGPU_LIFETIME_MEDIUM) == int(KVFDP_CLASS_MEDIUM) &&
		      int(KVGPU_LIFETIME_LONG) == int(KVFDP_CLASS_LONG) &&
		      int(KVGPU_LIFETIME_EXTREME) == int(KVFDP_CLASS_EXTREME),
	      "kvgpu lifetimes must equal the tagger's lifetime classes");

namespace kvfdp::gpu {
namespace {

// io_uring user_data: the op type in the top byte, a slot or job index below.
constexpr uint64_t kUdSlot = 1;
constexpr uint64_t kUdHeader = 2;
constexpr uint64_t kUdFsync = 3;
constexpr uint64_t kUdWake = 4;

uint64_t make_ud(uint64_t type, uint64_t idx) { return (type << 56) | idx; }
uint64_t ud_type(uint64_t ud) { return ud >> 56; }
unsigned ud_index(uint64_t ud) { return static_cast<unsigned>(ud & ((1ull << 56) - 1)); }

} // namespace

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
	pid_ = ::getpid();
	dir_.reset(::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!dir_ || ::faccessat(dir_.get(), ".", W_OK | X_OK, AT_EACCESS) != 0)
		return KVGPU_ERR_DIR;
	if (opts_.capacity_bytes == 0)
		remove_stale_temps(); // a bounded store does it in its one directory scan
	if (int rc = probe_direct(); rc < 0)
		return rc;
	if (opts_.capacity_bytes > 0) {
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
	}

	wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!wake_)
		return KVGPU_ERR_NOMEM;

	unsigned engine = opts_.engine;
	if (engine == KVGPU_ENGINE_AUTO)
		engine = cuda_device_count() > 0 ? KVGPU_ENGINE_CUDA : KVGPU_ENGINE_HOST;
	// The prefetch buffers are slots past the ring: the engine copies from them like from any slot.
	unsigned all_slots = opts_.slots + opts_.prefetch_slots;
	int rc = engine == KVGPU_ENGINE_CUDA
			 ? make_cuda_engine(opts_.cuda_device, all_slots, opts_.max_jobs, wake_.get(), &engine_)
			 : make_host_engine(all_slots, opts_.max_jobs, wake_.get(), &engine_);
	if (rc < 0)
		return rc;

	size_t ring_bytes = size_t(all_slots) * opts_.slot_bytes;
	if (int e = engine_->alloc_staging(ring_bytes, &staging_); e < 0)
		return e;
	headers_ = std::aligned_alloc(kBlock, size_t(opts_.max_jobs) * kBlock);
	if (!headers_)
		return KVGPU_ERR_NOMEM;

	slots_.resize(all_slots);
	free_slots_.reserve(opts_.slots);
	for (unsigned i = 0; i < all_slots; i++)
		slots_[i].buf = static_cast<char *>(staging_) + size_t(i) * opts_.slot_bytes;
	for (unsigned i = 0; i < opts_.slots; i++)
		free_slots_.push_back(opts_.slots - 1 - i);
	batches_ = std::vector<Batch>(opts_.max_jobs);
	prefetch_ = std::vector<PrefetchEntry>(opts_.prefetch_slots);
	jobs_ = std::vector<Job>(opts_.max_jobs);
	for (unsigned i = 0; i < opts_.max_jobs; i++)
		jobs_[i].header_buf = static_cast<char *>(headers_) + size_t(i) * kBlock;
	pending_.reserve(opts_.max_jobs);
	accepted_.reserve(opts_.max_jobs);
	active_.reserve(opts_.max_jobs);

	if (io_uring_queue_init(opts_.queue_depth, &ring_, 0) < 0)
		return KVGPU_ERR_URING;
	ring_ok_ = true;
	// The staging slots as io_uring fixed buffers (index = slot): an O_DIRECT read or write
	// then skips pinning and mapping the slot's pages on every I/O. Where the kernel refuses
	// (RLIMIT_MEMLOCK), the plain ops do the same work per I/O.
	{
		std::vector<iovec> iov(all_slots);
		for (unsigned i = 0; i < all_slots; i++)
			iov[i] = {slots_[i].buf, opts_.slot_bytes};
		bufs_registered_ = io_uring_register_buffers(&ring_, iov.data(), all_slots) == 0;
	}
	if (int e = reader_.init(dir_.get(), dir_direct_, &c_); e < 0)
		return e;
	worker_ = std::thread([this] { run(); });
	return 0;
}

Context::~Context()
{
	if (worker_.joinable())
		(void)shutdown();
	if (store_)
		store_->close(); // its reclaimer's last unlinks, before the directory fd goes
	if (ring_ok_)
		io_uring_queue_exit(&ring_);
	if (staging_)
		engine_->free_staging(staging_);
	engine_.reset();
	std::free(headers_);
}

int Context::shutdown()
{
	{
		std::lock_guard lock(mu_);
		stop_ = true;
	}
	wake();
	if (worker_.joinable())
		worker_.join();
	std::lock_guard lock(mu_);
	int err = unwaited_error_;
	for (Job &j : jobs_)
		if (j.state == JobState::done && !j.waited && j.result < 0)
			err = j.result;
	return err;
}

int Context::remove_stale_temps()
{
	int dup = ::fcntl(dir_.get(), F_DUPFD_CLOEXEC, 0);
	if (dup < 0)
		return -errno;
	DIR *d = ::fdopendir(dup);
	if (!d) {
		::close(dup);
		return -errno;
	}
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
	int fd = ::openat(dir_.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0600);
	if (fd >= 0) {
		void *block = std::aligned_alloc(kBlock, kBlock);
		if (block) {
			std::memset(block, 0, kBlock);
			// Some filesystems accept O_DIRECT at open and refuse the I/O: try one block.
			dir_direct_ = ::pwrite(fd, block, kBlock, 0) == static_cast<ssize_t>(kBlock);
			std::free(block);
		}
		::close(fd);
		::unlinkat(dir_.get(), name.c_str(), 0);
	} else {
		int e = errno;
		// The create may have happened before O_DIRECT was refused (ramfs): remove it.
		::unlinkat(dir_.get(), name.c_str(), 0);
		if (e != EINVAL)
			return errno_to_kvgpu(e) == KVGPU_ERR_PERM ? KVGPU_ERR_DIR : errno_to_kvgpu(e);
	}
	if (!dir_direct_ && opts_.direct_io == KVGPU_DIRECT_ON)
		return KVGPU_ERR_DIRECT;
	return 0;
}

void Context::wake()
{
	uint64_t one = 1;
	(void)!::write(wake_.get(), &one, sizeof(one));
}

// ---- caller side ----

int Context::reserve_job(Kind kind, unsigned *idx, int64_t *ticket, bool tracked)
{
	std::unique_lock lock(mu_);
	if (stop_)
		return KVGPU_ERR_INVAL;
	int64_t t = next_ticket_++;
	unsigned i = static_cast<unsigned>(t % opts_.max_jobs);
	// Tickets map to job slots round-robin; ticket t may reuse the slot once t - max_jobs is done.
	cv_.wait(lock, [&] {
		const Job &j = jobs_[i];
		if (t <= int64_t(opts_.max_jobs))
			return j.state == JobState::free;
		return j.state == JobState::done && j.ticket == t - int64_t(opts_.max_jobs);
	});
	Job &j = jobs_[i];
	if (j.state == JobState::done && !j.waited && j.result < 0)
		unwaited_error_ = j.result;
	j.ticket = t;
	j.state = JobState::reserved;
	j.result = 0;
	j.waited = !tracked;
	j.kind = kind;
	j.pslot = j.pentry = j.batch = -1;
	j.batch_pos = 0;
	j.reserved = 0;
	j.store_seq = 0;
	j.key_len = 0;
	*idx = i;
	*ticket = t;
	return 0;
}

void Context::publish_job(unsigned idx)
{
	{
		std::lock_guard lock(mu_);
		jobs_[idx].state = JobState::queued;
		pending_.push_back(idx);
		has_pending_.store(true, std::memory_order_release);
	}
	wake();
}

void Context::release_reserved(unsigned idx)
{
	std::lock_guard lock(mu_);
	jobs_[idx].state = JobState::done;
	jobs_[idx].waited = true;
	jobs_[idx].result = KVGPU_ERR_CUDA;
	cv_.notify_all();
}

int64_t Context::evict(const void *src, size_t bytes, std::string_view key, int lifetime, void *stream)
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
	if (int rc = reserve_job(Kind::evict, &idx, &ticket); rc < 0) {
		if (store_) {
			std::lock_guard lock(store_->mu());
			store_->unreserve(reserved);
		}
		return rc;
	}
	Job &j = jobs_[idx];
	j.reserved = reserved;
	j.src = static_cast<const char *>(src);
	j.dst = nullptr;
	j.bytes = bytes;
	j.lifetime = lifetime;
	j.key_len = static_cast<uint32_t>(key.size());
	std::memcpy(j.key, key.data(), key.size());
	j.key[key.size()] = '\0';
	j.fd.reset();
	if (int rc = engine_->mark_source(idx, stream); rc < 0) {
		if (store_) {
			std::lock_guard lock(store_->mu());
			store_->unreserve(reserved);
		}
		release_reserved(idx);
		return rc;
	}
	publish_job(idx);
	return ticket;
}

int Context::wait(int64_t ticket)
{
	std::unique_lock lock(mu_);
	if (ticket < 0 || ticket >= next_ticket_)
		return KVGPU_ERR_TICKET;
	if (ticket == 0) {
		int64_t upto = next_ticket_;
		cv_.wait(lock, [&] {
			for (const Job &j : jobs_)
				if (j.ticket < upto && j.state != JobState::free && j.state != JobState::done)
					return false;
			return true;
		});
		int err = unwaited_error_;
		unwaited_error_ = 0;
		for (Job &j : jobs_) {
			if (j.ticket < upto && j.state == JobState::done && !j.waited) {
				j.waited = true;
				if (j.result < 0)
					err = j.result;
			}
		}
		return err;
	}
	Job &j = jobs_[static_cast<size_t>(ticket % opts_.max_jobs)];
	cv_.wait(lock, [&] { return j.ticket > ticket || (j.ticket == ticket && j.state == JobState::done); });
	if (j.ticket != ticket)
		return KVGPU_ERR_EXPIRED;
	j.waited = true;
	return j.result;
}

void Context::open_batch(size_t n, const char *const *keys, const int *arg_rc, OpenChunk *pre, int *pre_rc,
			 uint64_t *pre_seq)
{
	// Open the files the loads will read (a key the index lacks, or one staged by prefetch, is
	// left to start_load: no I/O), then read their headers together: one io_uring submission
	// instead of one synchronous pread per chunk, so a batch waits one device latency for its
	// headers, not n.
	size_t opened = 0;
	for (size_t i = 0; i < n; i++) {
		pre[i] = OpenChunk{};
		pre_rc[i] = 1; // 1: not opened here
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
		if (!prefetch_.empty()) {
			std::lock_guard lock(mu_);
			bool staged = false;
			for (const PrefetchEntry &pe : prefetch_)
				staged = staged || pe.is(key);
			if (staged)
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
	if (prefetch_.empty())
		return;
	std::lock_guard lock(mu_);
	for (PrefetchEntry &p : prefetch_) {
		if (!p.is(key))
			continue;
		if (p.state == PrefetchState::staged)
			p.state = PrefetchState::free; // its slot is idle: the next prefetch reuses it
		else if (p.state == PrefetchState::reading)
			p.stale = true;
	}
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

int Context::start_load(std::string_view key, void *dst, size_t bytes, void *stream, int batch, uint32_t pos,
			int64_t *ticket, uint64_t *len, OpenChunk *pre, int pre_rc, uint64_t pre_seq)
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
	int staged = -1;
	uint64_t staged_bytes = 0;
	for (int tries = 0; tries < 2 && !prefetch_.empty(); tries++) {
		int64_t wait_for = 0;
		{
			std::lock_guard lock(mu_);
			for (size_t p = 0; p < prefetch_.size(); p++) {
				PrefetchEntry &pe = prefetch_[p];
				if (!pe.is(key) || pe.stale)
					continue;
				if (pe.state == PrefetchState::staged && pe.bytes <= bytes) {
					pe.state = PrefetchState::claimed;
					staged = static_cast<int>(p);
					staged_bytes = pe.bytes;
				} else if (pe.state == PrefetchState::reading) {
					wait_for = pe.ticket;
				}
				break;
			}
		}
		if (staged >= 0 || wait_for == 0)
			break;
		(void)wait(wait_for); // the prefetch is in flight: its read is the one to wait for
	}
	unsigned idx = 0;
	if (staged >= 0) {
		drop_pre();
		if (int rc = reserve_job(Kind::load, &idx, ticket, batch < 0); rc < 0) {
			std::lock_guard lock(mu_);
			prefetch_[size_t(staged)].state = PrefetchState::free;
			return rc;
		}
		Job &j = jobs_[idx];
		j.src = nullptr;
		j.dst = static_cast<char *>(dst);
		j.bytes = staged_bytes;
		j.fd.reset();
		j.direct = false;
		j.check_crc = false; // verified when it was staged
		j.pslot = static_cast<int>(opts_.slots) + staged;
		j.pentry = staged;
		c_.prefetch_hits.fetch_add(1, std::memory_order_relaxed);
	} else {
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
		if (int rc = reserve_job(Kind::load, &idx, ticket, batch < 0); rc < 0)
			return rc; // oc closes its file
		read_job(jobs_[idx], std::move(oc), static_cast<char *>(dst));
	}
	Job &j = jobs_[idx];
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
	if (int rc = engine_->mark_source(idx, stream); rc < 0) {
		j.fd.reset();
		if (staged >= 0) {
			std::lock_guard lock(mu_);
			prefetch_[size_t(staged)].state = PrefetchState::free;
		}
		release_reserved(idx);
		return rc;
	}
	publish_job(idx);
	return 0;
}

int64_t Context::load(std::string_view key, void *dst, size_t bytes, void *stream)
{
	int64_t ticket = 0;
	uint64_t n = 0;
	if (int rc = start_load(key, dst, bytes, stream, -1, 0, &ticket, &n); rc < 0)
		return rc;
	int rc = wait(ticket);
	return rc < 0 ? rc : static_cast<int64_t>(n);
}

int64_t Context::load_batch(size_t n, const char *const *keys, void *const *dsts, const size_t *sizes,
			    int64_t *results, void *stream)
{
	int64_t bt = 0;
	int b = 0;
	{
		std::unique_lock lock(mu_);
		if (stop_)
			return KVGPU_ERR_INVAL;
		bt = next_batch_++;
		b = static_cast<int>(bt % int64_t(batches_.size()));
		// A batch slot is reused once its previous batch is done (its results are in place).
		cv_.wait(lock, [&] { return batches_[size_t(b)].remaining == 0; });
		Batch &bb = batches_[size_t(b)];
		bb.ticket = bt;
		bb.remaining = 1; // held until every load is queued
		bb.first_err = 0;
		bb.results = results;
	}
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
			for (size_t q = 0; q < m; q++) {
				const char *kq = keys[i + q];
				size_t lq = kq ? ::strnlen(kq, KVGPU_MAX_KEY + 1) : 0;
				arg_rc[q] = !kq || !dsts[i + q]		    ? KVGPU_ERR_INVAL
					    : lq == 0 || lq > KVGPU_MAX_KEY ? KVGPU_ERR_KEY
					    : sizes[i + q] == 0		    ? KVGPU_ERR_SIZE
									    : 0;
			}
			open_batch(m, keys + i, arg_rc, pre, pre_rc, pre_seq);
			if (batch_opened_)
				batch_opened_(batch_opened_arg_);
		}
		int rc = arg_rc[g];
		if (rc == 0) {
			{
				std::lock_guard lock(mu_);
				batches_[size_t(b)].remaining++;
			}
			int64_t t = 0;
			uint64_t len = 0;
			rc = start_load(std::string_view(k, klen), dsts[i], sizes[i], stream, b, uint32_t(i), &t, &len,
					&pre[g], pre_rc[g], pre_seq[g]);
			if (rc == 0)
				continue;
			std::lock_guard lock(mu_);
			batches_[size_t(b)].remaining--;
		}
		std::lock_guard lock(mu_);
		results[i] = rc;
		if (batches_[size_t(b)].first_err == 0)
			batches_[size_t(b)].first_err = rc;
	}
	std::lock_guard lock(mu_);
	if (--batches_[size_t(b)].remaining == 0)
		cv_.notify_all();
	return bt;
}

int Context::batch_wait(int64_t bt)
{
	std::unique_lock lock(mu_);
	if (bt <= 0 || bt >= next_batch_)
		return KVGPU_ERR_TICKET;
	Batch &b = batches_[size_t(bt % int64_t(batches_.size()))];
	cv_.wait(lock, [&] { return b.ticket != bt || b.remaining == 0; });
	return b.ticket != bt ? KVGPU_ERR_EXPIRED : b.first_err;
}

int Context::batch_poll(int64_t bt)
{
	std::lock_guard lock(mu_);
	if (bt <= 0 || bt >= next_batch_)
		return KVGPU_ERR_TICKET;
	const Batch &b = batches_[size_t(bt % int64_t(batches_.size()))];
	return b.ticket != bt || b.remaining == 0 ? 1 : 0;
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
	uint64_t start_gen = 0; // entries staged by this call are not replaced by its later keys
	{
		std::lock_guard lock(mu_);
		start_gen = prefetch_gen_;
	}
	for (size_t i = 0; i < n && !prefetch_.empty(); i++) {
		std::string_view key(keys[i], ::strlen(keys[i]));
		if (store_) {
			std::lock_guard lock(store_->mu());
			if (!store_->find(key))
				continue; // not stored: nothing to read
		}
		int p = -1;
		{
			std::lock_guard lock(mu_);
			bool have = false;
			for (PrefetchEntry &pe : prefetch_)
				if (pe.is(key) && !pe.stale && pe.state != PrefetchState::claimed)
					have = true;
			if (have) {
				count++;
				continue;
			}
			// A free entry, else the one staged longest ago.
			for (size_t q = 0; q < prefetch_.size(); q++) {
				PrefetchEntry &pe = prefetch_[q];
				if (pe.state == PrefetchState::free) {
					p = static_cast<int>(q);
					break;
				}
				if (pe.state == PrefetchState::staged && pe.gen <= start_gen &&
				    (p < 0 || pe.gen < prefetch_[size_t(p)].gen))
					p = static_cast<int>(q);
			}
			if (p < 0)
				break; // every buffer is being read or copied
			PrefetchEntry &pe = prefetch_[size_t(p)];
			pe.state = PrefetchState::reading;
			pe.stale = false;
			pe.ticket = 0;
			pe.key_len = static_cast<uint32_t>(key.size());
			std::memcpy(pe.key, key.data(), key.size());
		}
		OpenChunk oc;
		int rc = reader_.open_chunk(key, &oc);
		if (rc == 0 && oc.header.payload_bytes > opts_.slot_bytes) {
			oc.fd.reset();
			rc = KVGPU_ERR_SIZE; // larger than a buffer: loads read it as usual
		}
		unsigned idx = 0;
		int64_t ticket = 0;
		if (rc == 0)
			rc = reserve_job(Kind::prefetch, &idx, &ticket, false); // on failure oc closes its file
		if (rc < 0) {
			std::lock_guard lock(mu_);
			prefetch_[size_t(p)].state = PrefetchState::free;
			continue;
		}
		Job &j = jobs_[idx];
		read_job(j, std::move(oc), nullptr);
		j.pslot = static_cast<int>(opts_.slots) + p;
		j.pentry = p;
		{
			std::lock_guard lock(mu_);
			prefetch_[size_t(p)].ticket = ticket;
			prefetch_[size_t(p)].bytes = j.bytes;
		}
		publish_job(idx);
		c_.prefetches.fetch_add(1, std::memory_order_relaxed);
		count++;
	}
	return count;
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
	out->engine = engine_ ? engine_->kind() : 0;
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

// ---- worker side ----

io_uring_sqe *Context::get_sqe()
{
	io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
	if (!sqe) {
		// The submission queue is full: hand it to the kernel, which empties it.
		io_uring_submit(&ring_);
		sqe = io_uring_get_sqe(&ring_);
	}
	return sqe;
}

void Context::prep_slot_io(io_uring_sqe *sqe, bool write, int fd, unsigned s, uint64_t len, uint64_t off)
{
	char *buf = slots_[s].buf;
	auto n = static_cast<unsigned>(len);
	if (!bufs_registered_)
		write ? io_uring_prep_write(sqe, fd, buf, n, off) : io_uring_prep_read(sqe, fd, buf, n, off);
	else if (write)
		io_uring_prep_write_fixed(sqe, fd, buf, n, off, int(s));
	else
		io_uring_prep_read_fixed(sqe, fd, buf, n, off, int(s));
}

void Context::arm_wake()
{
	io_uring_sqe *sqe = get_sqe();
	io_uring_prep_read(sqe, wake_.get(), &wake_buf_, sizeof(wake_buf_), 0);
	io_uring_sqe_set_data64(sqe, make_ud(kUdWake, 0));
}

int Context::pop_free_slot()
{
	if (free_slots_.empty())
		return -1;
	unsigned s = free_slots_.back();
	free_slots_.pop_back();
	return static_cast<int>(s);
}

void Context::run()
{
	int bind = engine_->bind_thread();
	arm_wake();
	for (;;) {
		if (bind < 0) {
			// Without a device binding no copy can run: fail everything that arrives.
			accept_jobs();
			for (unsigned j : active_)
				fail(j, bind, 0);
		}
		bool progressed = step();
		io_uring_submit(&ring_);
		if (active_.empty()) {
			std::lock_guard lock(mu_);
			if (stop_ && pending_.empty())
				break;
		}
		io_uring_cqe *cqe = nullptr;
		if (!progressed && io_uring_wait_cqe(&ring_, &cqe) < 0)
			continue;
		unsigned head;
		unsigned seen = 0;
		io_uring_for_each_cqe(&ring_, head, cqe)
		{
			handle_cqe(cqe);
			seen++;
		}
		io_uring_cq_advance(&ring_, seen);
	}
}

bool Context::step()
{
	bool p = false;
	size_t before = active_.size();
	accept_jobs();
	p |= active_.size() != before;
	p |= poll_copies();
	for (unsigned j : active_)
		p |= handoff(j);
	for (unsigned j : active_)
		p |= issue(j);
	for (size_t i = 0; i < active_.size();) {
		unsigned j = active_[i];
		bool done = false;
		p |= finish_job(j);
		done = jobs_[j].phase == Phase::finished;
		if (done)
			active_.erase(active_.begin() + static_cast<long>(i));
		else
			i++;
	}
	return p;
}

void Context::accept_jobs()
{
	// Most passes (one per batch of completions) find nothing new: skip the lock then.
	if (!has_pending_.exchange(false, std::memory_order_acquire))
		return;
	{
		std::lock_guard lock(mu_);
		accepted_.swap(pending_);
		for (unsigned j : accepted_)
			jobs_[j].state = JobState::active;
	}
	for (unsigned j : accepted_) {
		start_job(j);
		active_.push_back(j);
	}
	accepted_.clear();
}

void Context::fail(unsigned j, int code, int err_no)
{
	Job &job = jobs_[j];
	if (job.err == 0)
		job.err = code;
	if (err_no)
		c_.last_errno.store(err_no, std::memory_order_relaxed);
}

void Context::start_job(unsigned j)
{
	Job &job = jobs_[j];
	job.phase = Phase::data;
	job.blocks = (job.bytes + opts_.slot_bytes - 1) / opts_.slot_bytes;
	job.issued = job.handed = job.finished = 0;
	job.ops = 0;
	job.crc = 0;
	job.err = 0;
	job.seq = 0;
	if (job.kind == Kind::evict) {
		job.seq = ++temp_seq_;
		FileName tmp;
		temp_name(pid_, job.seq, &tmp);
		int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
		job.direct = dir_direct_;
		job.fd.reset(::openat(dir_.get(), tmp.c_str(), flags | (job.direct ? O_DIRECT : 0), 0644));
		if (!job.fd && errno == EINVAL && job.direct && opts_.direct_io == KVGPU_DIRECT_AUTO) {
			// Refused after the create on some filesystems: drop the empty file, go buffered.
			::unlinkat(dir_.get(), tmp.c_str(), 0);
			job.direct = false;
			job.fd.reset(::openat(dir_.get(), tmp.c_str(), flags, 0644));
		}
		if (!job.fd) {
			job.seq = 0; // nothing to unlink
			fail(j, errno_to_kvgpu(errno), errno);
			return;
		}
		// Reserve the whole file first: a full filesystem fails here, before any data moves.
		if (::fallocate(job.fd.get(), 0, 0, static_cast<off_t>(file_bytes(job.bytes))) != 0 &&
		    errno != EOPNOTSUPP && errno != ENOSYS) {
			fail(j, errno_to_kvgpu(errno), errno);
			return;
		}
		// The hint goes on before the first write, so every bio of the file carries it.
		uint64_t hint = static_cast<uint64_t>(job.lifetime);
		if (::fcntl(job.fd.get(), KVFDP_F_SET_RW_HINT, &hint) != 0)
			c_.hint_failures.fetch_add(1, std::memory_order_relaxed);
	}
	if (job.fd)
		(job.direct ? c_.direct_files : c_.buffered_files).fetch_add(1, std::memory_order_relaxed);
	if (job.kind == Kind::prefetch)
		return; // reads only: nothing on the copy engine to order
	if (int rc = engine_->order_after(j); rc < 0)
		fail(j, rc, 0);
}

void Context::release_slot(unsigned s)
{
	slots_[s].state = SlotState::free;
	if (s < opts_.slots)
		free_slots_.push_back(s); // prefetch slots belong to their entry, not to the ring
}

bool Context::issue(unsigned j)
{
	Job &job = jobs_[j];
	bool p = false;
	if (job.pslot >= 0) {
		// One piece in a prefetch slot: read into it (prefetch), or copy out of it (a staged load).
		if (job.err != 0 || job.issued > 0)
			return false;
		Slot &slot = slots_[unsigned(job.pslot)];
		slot.job = j;
		slot.piece = 0;
		slot.len = static_cast<uint32_t>(job.bytes);
		job.issued = 1;
		if (job.kind == Kind::load) {
			slot.state = SlotState::io_done;
			return true;
		}
		io_uring_sqe *sqe = get_sqe();
		prep_slot_io(sqe, false, job.fd.get(), unsigned(job.pslot), align_up(slot.len), kDataOffset);
		io_uring_sqe_set_data64(sqe, make_ud(kUdSlot, unsigned(job.pslot)));
		slot.state = SlotState::io;
		io_in_flight_++;
		store_max(c_.max_io, io_in_flight_);
		job.ops++;
		return true;
	}
	while (job.err == 0 && job.phase == Phase::data && job.issued < job.blocks) {
		int s = pop_free_slot();
		if (s < 0)
			break;
		Slot &slot = slots_[static_cast<unsigned>(s)];
		uint64_t off = job.issued * opts_.slot_bytes;
		slot.job = j;
		slot.piece = job.issued;
		slot.len = static_cast<uint32_t>(std::min<uint64_t>(opts_.slot_bytes, job.bytes - off));
		job.issued++;
		p = true;
		if (job.kind == Kind::evict) {
			if (int rc = engine_->copy(static_cast<unsigned>(s), slot.buf, job.src + off, slot.len); rc < 0) {
				fail(j, rc, 0);
				slot.state = SlotState::copied; // handed back by handoff's error path
				break;
			}
			slot.state = SlotState::copying;
			copies_in_flight_++;
			store_max(c_.max_copies, copies_in_flight_);
		} else {
			io_uring_sqe *sqe = get_sqe();
			prep_slot_io(sqe, false, job.fd.get(), unsigned(s), align_up(slot.len), kDataOffset + off);
			io_uring_sqe_set_data64(sqe, make_ud(kUdSlot, static_cast<unsigned>(s)));
			slot.state = SlotState::io;
			io_in_flight_++;
			store_max(c_.max_io, io_in_flight_);
		}
		job.ops++;
	}
	return p;
}

bool Context::poll_copies()
{
	bool p = false;
	for (unsigned s = 0; s < slots_.size(); s++) {
		Slot &slot = slots_[s];
		if (slot.state != SlotState::copying)
			continue;
		int r = engine_->query(s);
		if (r == 0)
			continue;
		Job &job = jobs_[slot.job];
		if (r < 0)
			fail(slot.job, r, 0);
		copies_in_flight_--;
		job.ops--;
		p = true;
		if (job.kind == Kind::load) {
			// H2D done: the slot is free again.
			release_slot(s);
			job.finished++;
		} else {
			slot.state = SlotState::copied;
		}
	}
	return p;
}

bool Context::handoff(unsigned j)
{
	Job &job = jobs_[j];
	bool p = false;
	if (job.err != 0) {
		// Give back every slot of the failed job that is not waiting on the kernel or the engine.
		for (unsigned s = 0; s < slots_.size(); s++) {
			Slot &slot = slots_[s];
			if (slot.job == j && (slot.state == SlotState::copied || slot.state == SlotState::io_done)) {
				release_slot(s);
				job.finished++;
				p = true;
			}
		}
		return p;
	}
	// In piece order: the CRC runs over the payload front to back.
	while (job.handed < job.issued) {
		unsigned s = 0;
		for (; s < slots_.size(); s++)
			if (slots_[s].state != SlotState::free && slots_[s].state != SlotState::staged &&
			    slots_[s].job == j && slots_[s].piece == job.handed)
				break;
		if (s == slots_.size())
			break;
		Slot &slot = slots_[s];
		SlotState ready = job.kind == Kind::evict ? SlotState::copied : SlotState::io_done;
		if (slot.state != ready)
			break;
		uint64_t off = job.handed * opts_.slot_bytes;
		uint64_t padded = align_up(slot.len);
		job.handed++;
		p = true;
		if (job.kind == Kind::evict) {
			// The last block is zero-padded on disk; the header keeps the true length.
			if (padded != slot.len)
				std::memset(slot.buf + slot.len, 0, padded - slot.len);
			if (opts_.checksum)
				job.crc = crc32c(job.crc, slot.buf, slot.len);
			io_uring_sqe *sqe = get_sqe();
			prep_slot_io(sqe, true, job.fd.get(), s, padded, kDataOffset + off);
			io_uring_sqe_set_data64(sqe, make_ud(kUdSlot, s));
			slot.state = SlotState::io;
			io_in_flight_++;
			store_max(c_.max_io, io_in_flight_);
		} else {
			if (job.check_crc)
				job.crc = crc32c(job.crc, slot.buf, slot.len);
			if (job.kind == Kind::prefetch) {
				// The whole chunk is in its buffer; it stays there until a load claims it.
				slot.state = SlotState::staged;
				job.finished++;
				continue;
			}
			if (int rc = engine_->copy(s, job.dst + off, slot.buf, slot.len); rc < 0) {
				fail(j, rc, 0);
				release_slot(s);
				job.finished++;
				continue;
			}
			slot.state = SlotState::copying;
			copies_in_flight_++;
			store_max(c_.max_copies, copies_in_flight_);
		}
		job.ops++;
	}
	return p;
}

void Context::handle_cqe(const io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	int res = cqe->res;
	switch (ud_type(ud)) {
	case kUdWake:
		arm_wake();
		return;
	case kUdSlot: {
		unsigned s = ud_index(ud);
		Slot &slot = slots_[s];
		unsigned j = slot.job;
		Job &job = jobs_[j];
		io_in_flight_--;
		job.ops--;
		if (res < 0)
			fail(j, errno_to_kvgpu(res), -res);
		if (job.kind == Kind::evict) {
			c_.writes.fetch_add(1, std::memory_order_relaxed);
			if (res >= 0 && uint64_t(res) != align_up(slot.len))
				fail(j, KVGPU_ERR_NO_SPACE, ENOSPC); // a short write: the device ran out of room
			slot.state = SlotState::free;
			free_slots_.push_back(s);
			job.finished++;
		} else { // load or prefetch
			c_.reads.fetch_add(1, std::memory_order_relaxed);
			if (res >= 0 && uint64_t(res) < slot.len)
				fail(j, KVGPU_ERR_CORRUPT, 0); // the file ended early
			slot.state = SlotState::io_done;
		}
		return;
	}
	case kUdHeader:
	case kUdFsync: {
		unsigned j = ud_index(ud);
		io_in_flight_--;
		jobs_[j].ops--;
		if (res < 0)
			fail(j, errno_to_kvgpu(res), -res);
		else if (ud_type(ud) == kUdHeader && res != static_cast<int>(kBlock))
			fail(j, KVGPU_ERR_NO_SPACE, ENOSPC);
		return;
	}
	default:
		return;
	}
}

bool Context::finish_job(unsigned j)
{
	Job &job = jobs_[j];
	if (job.err != 0) {
		if (job.ops > 0)
			return false;
		if (job.kind == Kind::evict && job.seq != 0) {
			FileName tmp;
			temp_name(pid_, job.seq, &tmp);
			::unlinkat(dir_.get(), tmp.c_str(), 0);
		}
		complete(j, job.err);
		return true;
	}
	if (job.kind != Kind::evict) {
		if (job.finished < job.blocks || job.ops > 0)
			return false;
		if (job.check_crc && job.crc != job.stored_crc) {
			c_.checksum_failures.fetch_add(1, std::memory_order_relaxed);
			complete(j, KVGPU_ERR_CHECKSUM);
			return true;
		}
		complete(j, 0);
		return true;
	}
	if (job.phase == Phase::data) {
		if (job.finished < job.blocks || job.ops > 0)
			return false;
		// Every payload block is on disk: the header goes last, so a file with a valid
		// header is complete even before the rename.
		encode_header(job.header_buf, std::string_view(job.key, job.key_len), job.bytes,
			      static_cast<uint32_t>(job.lifetime), opts_.checksum != 0, job.crc, now_ns());
		bool durable = opts_.durability == KVGPU_DURABLE_FSYNC;
		io_uring_sqe *sqe = get_sqe();
		io_uring_prep_write(sqe, job.fd.get(), job.header_buf, kBlock, 0);
		io_uring_sqe_set_data64(sqe, make_ud(kUdHeader, j));
		job.ops++;
		io_in_flight_++;
		if (durable) {
			sqe->flags |= IOSQE_IO_LINK;
			sqe = get_sqe();
			io_uring_prep_fsync(sqe, job.fd.get(), 0);
			io_uring_sqe_set_data64(sqe, make_ud(kUdFsync, j));
			job.ops++;
			io_in_flight_++;
		}
		store_max(c_.max_io, io_in_flight_);
		job.phase = Phase::header;
		return true;
	}
	if (job.phase == Phase::header && job.ops == 0) {
		FileName tmp, name;
		temp_name(pid_, job.seq, &tmp);
		std::string_view key(job.key, job.key_len);
		// rename(2) is atomic: readers see the old chunk or the new one, never a part.
		if (store_) {
			// The index publishes it: rename, journal record and accounting under one lock.
			std::lock_guard lock(store_->mu());
			int rc = store_->commit(tmp.c_str(), key, job.bytes, opts_.checksum ? job.crc : 0,
						static_cast<uint32_t>(job.lifetime), opts_.checksum ? kFlagChecksum : 0);
			if (rc < 0) {
				fail(j, errno_to_kvgpu(rc), -rc);
				return true;
			}
			job.reserved = 0;
		} else {
			key_to_name(key, &name);
			if (::renameat(dir_.get(), tmp.c_str(), dir_.get(), name.c_str()) != 0) {
				fail(j, errno_to_kvgpu(errno), errno);
				return true;
			}
		}
		job.seq = 0;
		if (opts_.durability == KVGPU_DURABLE_FSYNC && ::fsync(dir_.get()) != 0) {
			fail(j, errno_to_kvgpu(errno), errno);
			return true;
		}
		complete(j, 0);
		return true;
	}
	return false;
}

void Context::complete(unsigned j, int result)
{
	Job &job = jobs_[j];
	job.fd.reset();
	job.phase = Phase::finished;
	if (store_ && job.kind == Kind::evict && job.reserved) {
		std::lock_guard lock(store_->mu());
		store_->unreserve(job.reserved);
		job.reserved = 0;
	}
	if (store_ && job.kind == Kind::load && job.key_len &&
	    (result == KVGPU_ERR_CHECKSUM || result == KVGPU_ERR_CORRUPT)) {
		// Damaged on disk: it can never load again, and it holds capacity.
		std::lock_guard lock(store_->mu());
		store_->drop(std::string_view(job.key, job.key_len), job.store_seq);
	}
	if (job.kind == Kind::prefetch) {
		if (result != 0 && job.pslot >= 0)
			slots_[unsigned(job.pslot)].state = SlotState::free;
	} else if (job.kind == Kind::evict) {
		if (result == 0) {
			c_.evicts.fetch_add(1, std::memory_order_relaxed);
			c_.evict_bytes.fetch_add(job.bytes, std::memory_order_relaxed);
		} else {
			c_.evict_errors.fetch_add(1, std::memory_order_relaxed);
		}
	} else if (result == 0) {
		c_.loads.fetch_add(1, std::memory_order_relaxed);
		c_.load_bytes.fetch_add(job.bytes, std::memory_order_relaxed);
	} else {
		c_.load_errors.fetch_add(1, std::memory_order_relaxed);
	}
	std::lock_guard lock(mu_);
	if (job.pentry >= 0) {
		PrefetchEntry &pe = prefetch_[size_t(job.pentry)];
		if (job.kind == Kind::prefetch && result == 0 && !pe.stale && pe.state == PrefetchState::reading) {
			pe.state = PrefetchState::staged;
			pe.gen = ++prefetch_gen_;
		} else if (job.kind == Kind::load || pe.state == PrefetchState::reading) {
			pe.state = PrefetchState::free;
			pe.stale = false;
		}
	}
	if (job.batch >= 0) {
		Batch &b = batches_[size_t(job.batch)];
		b.results[job.batch_pos] = result < 0 ? int64_t(result) : int64_t(job.bytes);
		if (result < 0 && b.first_err == 0)
			b.first_err = result;
		b.remaining--;
	}
	job.result = result;
	job.state = JobState::done;
	cv_.notify_all();
}

} // namespace kvfdp::gpu
