// The bounded store's index: journal replay and compaction, reconciliation with the directory,
// capacity reservations and eviction by policy.
#include "kvgpu/store_index.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bpf/tag.h"
#include "kvgpu/crc32c.hpp"
#include "kvgpu/errors.hpp"

namespace kvfdp::gpu {
namespace {

constexpr char kIndexMagic[8] = {'K', 'V', 'G', 'P', 'U', 'I', 'X', '1'};
constexpr uint32_t kIndexVersion = 1;
constexpr size_t kRewriteBytes = 1u << 20;

constexpr size_t align8(size_t n)
{
	return (n + 7) & ~size_t(7);
}

uint32_t record_crc(const IndexRecord &r, std::string_view key)
{
	IndexRecord tmp = r;
	tmp.crc = 0;
	return crc32c(crc32c(0, &tmp, sizeof(tmp)), key.data(), key.size());
}

IndexFileHeader make_file_header()
{
	IndexFileHeader h{};
	std::memcpy(h.magic, kIndexMagic, sizeof(h.magic));
	h.version = kIndexVersion;
	h.crc = crc32c(0, &h, offsetof(IndexFileHeader, crc));
	return h;
}

bool write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = ::write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= size_t(w);
	}
	return true;
}

bool is_chunk_name(const char *n)
{
	return (n[0] == 'k' || n[0] == 'h') && n[1] == '-';
}

void dead_name(uint64_t n, FileName *out)
{
	std::snprintf(out->str, sizeof(out->str), "%s%llu", kDeadPrefix,
		      static_cast<unsigned long long>(n));
}

}  // namespace

StoreIndex::~StoreIndex()
{
	close();
	clear();
	journal_.reset();
	std::free(record_buf_);
	std::free(rewrite_buf_);
}

void StoreIndex::close()
{
	{
		std::lock_guard lock(mu_);
		stop_reclaim_ = true;
	}
	reclaim_cv_.notify_all();
	if (reclaimer_.joinable())
		reclaimer_.join();
	std::lock_guard lock(mu_);
	if (journal_ && record_len_ > 0)
		(void)flush_records();
}

void StoreIndex::reclaim_loop()
{
	std::unique_lock lock(mu_);
	for (;;) {
		reclaim_cv_.wait(lock, [&] { return stop_reclaim_ || !dead_.empty(); });
		if (dead_.empty())
			return;  // stopped, and every dead file is gone
		dead_work_.swap(dead_);
		lock.unlock();
		for (const auto &[n, bytes] : dead_work_) {
			FileName dn;
			dead_name(n, &dn);
			(void)::unlinkat(dir_fd_, dn.c_str(), 0);
			lock.lock();
			dead_bytes_ -= bytes;
			cv_.notify_all();  // a reservation may be waiting for the backlog to shrink
			lock.unlock();
		}
		dead_work_.clear();
		lock.lock();
	}
}

void StoreIndex::clear()
{
	for (auto &kv : map_)
		delete kv.second;
	map_.clear();
	newest_ = oldest_ = nullptr;
	used_ = 0;
}

int StoreIndex::open(int dir_fd, const StoreConfig &cfg)
{
	cfg_ = cfg;
	dir_fd_ = dir_fd;
	if (cfg_.capacity < file_bytes(1))
		return KVGPU_ERR_CAPACITY;
	// One context per store: the index and the accounting are this process's alone.
	if (::flock(dir_fd_, LOCK_EX | LOCK_NB) != 0)
		return errno == EWOULDBLOCK ? KVGPU_ERR_BUSY : errno_to_kvgpu(errno);
	record_buf_ = static_cast<char *>(std::malloc(kTouchBufferBytes + kMaxRecordBytes));
	rewrite_buf_ = static_cast<char *>(std::aligned_alloc(kBlock, kRewriteBytes));
	if (!record_buf_ || !rewrite_buf_)
		return KVGPU_ERR_NOMEM;
	journal_.reset(
		::openat(dir_fd_, kIndexName, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
	if (!journal_)
		return errno_to_kvgpu(errno) == KVGPU_ERR_PERM ? KVGPU_ERR_DIR
							       : errno_to_kvgpu(errno);
	struct stat st {};
	if (::fstat(journal_.get(), &st) != 0)
		return errno_to_kvgpu(errno);
	std::vector<char> buf(size_t(st.st_size));
	size_t got = 0;
	while (got < buf.size()) {
		ssize_t r = ::pread(journal_.get(), buf.data() + got, buf.size() - got, off_t(got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += size_t(r);
	}
	buf.resize(got);
	int rc = replay(buf);
	std::vector<char>().swap(buf);
	bool rebuild = rc != 0;
	if (rc == KVGPU_ERR_INDEX) {
		// Never trusted: every chunk comes back from its own header instead.
		clear();
		index_error_ = KVGPU_ERR_INDEX;
	}
	uint64_t changed_before = dropped_ + adopted_;
	if (int e = scan_directory(rebuild); e < 0)
		return e;
	if (rebuild && (rc == KVGPU_ERR_INDEX || !map_.empty()))
		rebuilds_++;
	if (rebuild || dropped_ + adopted_ != changed_before || records_ > 2 * map_.size() + 1024) {
		if (int e = compact(); e < 0)
			return e;
	}
	// The capacity may have been lowered since the last open (unlinked here, before any put).
	while (used_ > cfg_.capacity && oldest_)
		evict_one(oldest_);
	// The backlog of evicted chunks the reclaimer may still have to unlink: what the disk may
	// hold beyond the capacity (plus one victim) while a put does not wait for it.
	dead_bound_ = cfg_.capacity / 8;
	if (!cfg_.inline_unlink) {
		dead_.reserve(1024);
		dead_work_.reserve(1024);
		try {
			reclaimer_ = std::thread([this] { reclaim_loop(); });
		} catch (...) {
			cfg_.inline_unlink =
				true;  // no thread: unlink in the caller's thread as before
		}
	}
	return 0;
}

int StoreIndex::replay(std::vector<char> &buf)
{
	if (buf.empty())
		return 1;
	IndexFileHeader h;
	if (buf.size() < sizeof(h))
		return KVGPU_ERR_INDEX;
	std::memcpy(&h, buf.data(), sizeof(h));
	IndexFileHeader want = make_file_header();
	if (std::memcmp(&h, &want, sizeof(h)) != 0)
		return KVGPU_ERR_INDEX;
	size_t off = sizeof(h);
	while (off < buf.size()) {
		IndexRecord r;
		size_t left = buf.size() - off;
		if (left < sizeof(r))
			break;  // a torn last append
		std::memcpy(&r, buf.data() + off, sizeof(r));
		if (r.key_len == 0 || r.key_len > KVGPU_MAX_KEY)
			return KVGPU_ERR_INDEX;
		size_t len = align8(sizeof(r) + r.key_len);
		if (len > left)
			break;  // a torn last append
		std::string_view key(buf.data() + off + sizeof(r), r.key_len);
		if (record_crc(r, key) != r.crc)
			return KVGPU_ERR_INDEX;
		if (r.type == kRecordAdd) {
			if (r.payload_bytes == 0)
				return KVGPU_ERR_INDEX;
			auto it = map_.find(key);
			if (it != map_.end())
				erase_entry(it->second);
			add_entry(key, r.payload_bytes, r.payload_crc, r.lifetime, r.flags, r.seq)
				->hits = r.hits;
		} else if (r.type == kRecordTouch) {
			// A load of that version: LRU's recency and FIFO2's count as they were.
			auto it = map_.find(key);
			if (it != map_.end() && it->second->seq == r.seq) {
				StoreEntry *e = it->second;
				e->hits = r.hits;
				if (cfg_.policy == KVGPU_EVICT_LRU) {
					unlink_entry(e);
					link_newest(e);
				}
			}
		} else if (r.type == kRecordDel) {
			auto it = map_.find(key);
			if (it != map_.end())
				erase_entry(it->second);
		} else {
			return KVGPU_ERR_INDEX;
		}
		next_seq_ = std::max(next_seq_, r.seq + 1);
		records_++;
		off += len;
	}
	if (off < buf.size() && ::ftruncate(journal_.get(), off_t(off)) != 0)
		return KVGPU_ERR_INDEX;
	return 0;
}

StoreEntry *StoreIndex::adopt(const char *name, uint64_t *created_ns)
{
	UniqueFd fd(::openat(dir_fd_, name, O_RDONLY | O_CLOEXEC));
	if (!fd)
		return nullptr;
	ChunkHeader h{};
	std::string_view key;
	struct stat st {};
	bool ok = ::pread(fd.get(), rewrite_buf_, kBlock, 0) == ssize_t(kBlock) &&
		  decode_header_any(rewrite_buf_, &h, &key) == 0 && h.payload_bytes > 0 &&
		  ::fstat(fd.get(), &st) == 0 &&
		  uint64_t(st.st_size) >= file_bytes(h.payload_bytes);
	fd.reset();
	FileName fn;
	if (ok) {
		key_to_name(key, &fn);
		ok = std::strcmp(fn.c_str(), name) == 0;
	}
	if (!ok) {
		// A torn or damaged chunk (or one renamed by hand): it can never load, so it goes.
		if (::unlinkat(dir_fd_, name, 0) == 0)
			dropped_++;
		return nullptr;
	}
	if (auto it = map_.find(key); it != map_.end())
		erase_entry(it->second);
	*created_ns = h.created_ns;
	adopted_++;
	return add_entry(key, h.payload_bytes, h.payload_crc, h.lifetime, h.flags, next_seq_++);
}

int StoreIndex::scan_directory(bool rebuild)
{
	// The names the index expects, so a restart reads no chunk that it already knows.
	std::unordered_map<std::string, StoreEntry *> names;
	names.reserve(map_.size());
	FileName fn;
	for (auto &kv : map_) {
		key_to_name(kv.first, &fn);
		names.emplace(fn.c_str(), kv.second);
	}
	UniqueFd dup(::fcntl(dir_fd_, F_DUPFD_CLOEXEC, 0));
	if (!dup)
		return errno_to_kvgpu(errno);
	DIR *d = ::fdopendir(dup.get());
	if (!d)
		return errno_to_kvgpu(errno);
	(void)dup.release();  // the DIR owns it now
	::rewinddir(d);
	std::vector<std::pair<uint64_t, StoreEntry *>> found;  // rebuild: by creation time
	std::vector<std::string> orphans;
	while (dirent *e = ::readdir(d)) {
		const char *n = e->d_name;
		if (is_stale_temp(n)) {
			if (::unlinkat(dir_fd_, n, 0) == 0)
				stale_temps_++;
			continue;
		}
		if (std::strncmp(n, kDeadPrefix, sizeof(kDeadPrefix) - 1) == 0) {
			// Evicted (renamed away, its del record written) before a crash took the reclaimer.
			if (::unlinkat(dir_fd_, n, 0) == 0)
				stale_temps_++;
			continue;
		}
		if (std::strcmp(n, kIndexNewName) == 0) {
			::unlinkat(dir_fd_, n, 0);  // a compaction that did not finish
			continue;
		}
		if (!is_chunk_name(n))
			continue;
		if (!rebuild) {
			auto it = names.find(n);
			if (it != names.end()) {
				it->second->seen = true;
				continue;
			}
		}
		orphans.emplace_back(n);
	}
	::closedir(d);
	if (!rebuild) {
		// Chunks whose file is gone (unlinked before their record reached the journal).
		for (StoreEntry *e = oldest_; e;) {
			StoreEntry *next = e->newer;
			if (!e->seen) {
				dropped_++;
				erase_entry(e);
			}
			e = next;
		}
	}
	for (const std::string &n : orphans) {
		uint64_t created = 0;
		if (StoreEntry *e = adopt(n.c_str(), &created))
			found.emplace_back(created, e);
	}
	if (rebuild) {
		// Without a journal the write order is the headers' creation time.
		std::sort(found.begin(), found.end(),
			  [](const auto &a, const auto &b) { return a.first < b.first; });
		for (auto &f : found) {
			unlink_entry(f.second);
			link_newest(f.second);
		}
	}
	return 0;
}

int StoreIndex::compact()
{
	std::vector<char> out;
	out.reserve(sizeof(IndexFileHeader) + map_.size() * 64);
	IndexFileHeader h = make_file_header();
	out.insert(out.end(), reinterpret_cast<const char *>(&h),
		   reinterpret_cast<const char *>(&h) + sizeof(h));
	for (StoreEntry *e = oldest_; e; e = e->newer) {
		IndexRecord r{};
		r.type = kRecordAdd;
		r.key_len = static_cast<uint16_t>(e->key.size());
		r.seq = e->seq;
		r.payload_bytes = e->payload_bytes;
		r.payload_crc = e->payload_crc;
		r.lifetime = e->lifetime;
		r.flags = e->flags;
		r.hits = e->hits;
		r.crc = record_crc(r, e->key);
		size_t at = out.size();
		out.resize(at + align8(sizeof(r) + e->key.size()), 0);
		std::memcpy(out.data() + at, &r, sizeof(r));
		std::memcpy(out.data() + at + sizeof(r), e->key.data(), e->key.size());
	}
	UniqueFd fd(
		::openat(dir_fd_, kIndexNewName, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
	if (!fd)
		return errno_to_kvgpu(errno);
	bool ok = write_all(fd.get(), out.data(), out.size()) &&
		  (!cfg_.durable || ::fdatasync(fd.get()) == 0);
	int err = errno;
	fd.reset();
	if (!ok || ::renameat(dir_fd_, kIndexNewName, dir_fd_, kIndexName) != 0) {
		err = ok ? errno : err;
		::unlinkat(dir_fd_, kIndexNewName, 0);
		return errno_to_kvgpu(err);
	}
	int nfd = ::openat(dir_fd_, kIndexName, O_RDWR | O_APPEND | O_CLOEXEC);
	if (nfd < 0)
		return errno_to_kvgpu(errno);
	journal_.reset(nfd);  // closes the old journal
	records_ = map_.size();
	record_len_ = 0;  // the waiting touches are in the compacted order
	return 0;
}

int StoreIndex::write_record(uint16_t type, std::string_view key, uint64_t payload_bytes,
			     uint32_t crc, uint32_t lifetime, uint32_t flags, uint64_t seq,
			     uint32_t hits, bool flush)
{
	IndexRecord r{};
	r.type = type;
	r.key_len = static_cast<uint16_t>(key.size());
	r.seq = seq;
	r.payload_bytes = payload_bytes;
	r.payload_crc = crc;
	r.lifetime = lifetime;
	r.flags = flags;
	r.hits = hits;
	r.crc = record_crc(r, key);
	size_t len = align8(sizeof(r) + key.size());
	char *at = record_buf_ + record_len_;  // room: record_len_ < kTouchBufferBytes here
	std::memset(at, 0, len);
	std::memcpy(at, &r, sizeof(r));
	std::memcpy(at + sizeof(r), key.data(), key.size());
	record_len_ += len;
	records_++;
	if (!flush && record_len_ < kTouchBufferBytes)
		return 0;
	return flush_records();
}

int StoreIndex::flush_records()
{
	// One write(2) (O_APPEND) for the waiting touches and the new record. A lost record is
	// repaired at the next open by the directory reconciliation (a lost touch only ages its
	// chunk), so a failure here does not fail the evict.
	bool ok = write_all(journal_.get(), record_buf_, record_len_);
	int err = errno;
	record_len_ = 0;
	if (!ok)
		return -err;
	if (cfg_.durable)
		(void)::fdatasync(journal_.get());
	if (records_ > 2 * map_.size() + 65536)
		return compact();
	return 0;
}

void StoreIndex::append(uint16_t type, const StoreEntry &e)
{
	(void)write_record(type, e.key, e.payload_bytes, e.payload_crc, e.lifetime, e.flags, e.seq,
			   e.hits);
}

void StoreIndex::append_del(std::string_view key)
{
	(void)write_record(kRecordDel, key, 0, 0, 0, 0, next_seq_++, 0);
}

void StoreIndex::link_newest(StoreEntry *e)
{
	e->older = newest_;
	e->newer = nullptr;
	if (newest_)
		newest_->newer = e;
	newest_ = e;
	if (!oldest_)
		oldest_ = e;
}

void StoreIndex::unlink_entry(StoreEntry *e)
{
	if (e->older)
		e->older->newer = e->newer;
	else
		oldest_ = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		newest_ = e->older;
	e->newer = e->older = nullptr;
}

StoreEntry *StoreIndex::add_entry(std::string_view key, uint64_t payload_bytes, uint32_t crc,
				  uint32_t lifetime, uint32_t flags, uint64_t seq)
{
	auto *e = new StoreEntry;
	e->key.assign(key);
	e->payload_bytes = payload_bytes;
	e->file_bytes = file_bytes(payload_bytes);
	e->payload_crc = crc;
	e->lifetime = lifetime;
	e->flags = flags;
	e->seq = seq;
	map_.emplace(e->key, e);
	link_newest(e);
	used_ += e->file_bytes;
	return e;
}

void StoreIndex::erase_entry(StoreEntry *e)
{
	unlink_entry(e);
	used_ -= e->file_bytes;
	map_.erase(e->key);
	delete e;
}

const StoreEntry *StoreIndex::find(std::string_view key) const
{
	auto it = map_.find(key);
	return it == map_.end() ? nullptr : it->second;
}

void StoreIndex::evict_one(StoreEntry *victim)
{
	FileName fn;
	key_to_name(victim->key, &fn);
	bool unlinked_later = false;
	if (!cfg_.inline_unlink && reclaimer_.joinable()) {
		// A rename is a metadata update; the unlink (freeing the extents, and with `discard`
		// deallocating them on the device) runs on the reclaimer. A new chunk of the same key
		// can take the name at once, and a crash leaves a dead name the next open removes.
		FileName dn;
		dead_name(next_dead_, &dn);
		if (::renameat(dir_fd_, fn.c_str(), dir_fd_, dn.c_str()) == 0) {
			dead_.emplace_back(next_dead_++, victim->file_bytes);
			dead_bytes_ += victim->file_bytes;
			reclaim_cv_.notify_one();
			unlinked_later = true;
		}
	}
	if (!unlinked_later)
		(void)::unlinkat(dir_fd_, fn.c_str(), 0);
	evictions_++;
	evicted_bytes_ += victim->file_bytes;
	append_del(victim->key);
	erase_entry(victim);
}

bool StoreIndex::rewrite_in_place(StoreEntry *e)
{
	// The same bytes written again at the same offsets: the device sees a new write (placed by
	// the file's hint, now the newest data of its handle) and the old copy invalidated, which
	// is the second chance a log-structured cache gives by re-admitting a hit object.
	FileName fn;
	key_to_name(e->key, &fn);
	UniqueFd fd(
		::openat(dir_fd_, fn.c_str(), O_RDWR | O_CLOEXEC | (cfg_.direct ? O_DIRECT : 0)));
	if (!fd && errno == EINVAL && cfg_.direct)
		fd.reset(::openat(dir_fd_, fn.c_str(), O_RDWR | O_CLOEXEC));
	if (!fd)
		return false;
	uint64_t hint = e->lifetime;
	(void)::fcntl(fd.get(), KVFDP_F_SET_RW_HINT, &hint);
	bool ok = true;
	for (uint64_t off = 0; ok && off < e->file_bytes; off += kRewriteBytes) {
		size_t n = size_t(std::min<uint64_t>(kRewriteBytes, e->file_bytes - off));
		ok = ::pread(fd.get(), rewrite_buf_, n, off_t(off)) == ssize_t(n) &&
		     ::pwrite(fd.get(), rewrite_buf_, n, off_t(off)) == ssize_t(n);
	}
	return ok;  // fd closes here
}

int StoreIndex::reserve(uint64_t need, std::unique_lock<std::mutex> &lock)
{
	if (need > cfg_.capacity)
		return KVGPU_ERR_CAPACITY;
	while (used_ + reserved_ + need > cfg_.capacity) {
		StoreEntry *victim = oldest_;
		if (dead_bytes_ > dead_bound_) {
			// The reclaimer is behind: the disk holds more than the bound past the capacity.
			cv_.wait(lock);
			continue;
		}
		if (!victim) {
			// Only evicts in flight hold the space: wait until one commits or fails.
			cv_.wait(lock);
			continue;
		}
		if (cfg_.policy == KVGPU_EVICT_FIFO2 && victim->hits >= cfg_.reinsert_hits &&
		    rewrite_in_place(victim)) {
			reinserts_++;
			reinserted_bytes_ += victim->file_bytes;
			victim->hits = 0;
			victim->seq = next_seq_++;
			unlink_entry(victim);
			link_newest(victim);
			append(kRecordAdd,
			       *victim);  // replayed, it moves the chunk to the newest end
			continue;
		}
		evict_one(victim);
	}
	reserved_ += need;
	return 0;
}

void StoreIndex::unreserve(uint64_t need)
{
	reserved_ -= need;
	cv_.notify_all();
}

int StoreIndex::commit(const char *tmp, std::string_view key, uint64_t payload_bytes,
		       uint32_t payload_crc, uint32_t lifetime, uint32_t flags)
{
	FileName fn;
	key_to_name(key, &fn);
	// Under the index lock, so an eviction of the same name cannot unlink the new file.
	if (::renameat(dir_fd_, tmp, dir_fd_, fn.c_str()) != 0)
		return -errno;
	if (auto it = map_.find(key); it != map_.end())
		erase_entry(it->second);
	reserved_ -= file_bytes(payload_bytes);
	StoreEntry *e = add_entry(key, payload_bytes, payload_crc, lifetime, flags, next_seq_++);
	append(kRecordAdd, *e);
	cv_.notify_all();
	return 0;
}

uint64_t StoreIndex::hit(const StoreEntry *ce)
{
	auto *e = const_cast<StoreEntry *>(ce);
	hits_++;
	e->hits++;
	if (cfg_.policy == KVGPU_EVICT_LRU && e != newest_) {
		unlink_entry(e);
		link_newest(e);
	}
	if (cfg_.policy != KVGPU_EVICT_FIFO)  // FIFO's order is the write order: nothing to keep
		(void)write_record(kRecordTouch, e->key, 0, 0, 0, 0, e->seq, e->hits, false);
	return e->seq;
}

int StoreIndex::remove(std::string_view key)
{
	auto it = map_.find(key);
	if (it == map_.end())
		return KVGPU_ERR_NOT_FOUND;
	FileName fn;
	key_to_name(key, &fn);
	if (::unlinkat(dir_fd_, fn.c_str(), 0) != 0 && errno != ENOENT)
		return errno_to_kvgpu(errno);
	append_del(key);
	erase_entry(it->second);
	cv_.notify_all();
	return 0;
}

void StoreIndex::correct(std::string_view key, uint64_t seq, uint64_t payload_bytes,
			 uint32_t payload_crc)
{
	auto it = map_.find(key);
	if (it == map_.end() || it->second->seq != seq)
		return;
	StoreEntry *e = it->second;
	used_ -= e->file_bytes;
	e->payload_bytes = payload_bytes;
	e->file_bytes = file_bytes(payload_bytes);
	e->payload_crc = payload_crc;
	used_ += e->file_bytes;  // the next reservation evicts if this passed the capacity
}

void StoreIndex::drop(std::string_view key, uint64_t seq)
{
	auto it = map_.find(key);
	if (it == map_.end() || it->second->seq != seq)
		return;  // replaced or removed meanwhile: the newer chunk stays
	FileName fn;
	key_to_name(key, &fn);
	(void)::unlinkat(dir_fd_, fn.c_str(), 0);
	dropped_++;
	append_del(key);
	erase_entry(it->second);
	cv_.notify_all();
}

void StoreIndex::stats(kvgpu_stats_t *out) const
{
	out->capacity_bytes = cfg_.capacity;
	out->used_bytes = used_ + reserved_;
	out->chunks = map_.size();
	out->evictions = evictions_;
	out->evicted_bytes = evicted_bytes_;
	out->reinserts = reinserts_;
	out->reinserted_bytes = reinserted_bytes_;
	out->hits = hits_;
	out->misses = misses_;
	out->dropped = dropped_;
	out->adopted = adopted_;
	out->index_records = records_;
	out->index_rebuilds = rebuilds_;
	out->index_error = index_error_;
}

}  // namespace kvfdp::gpu
