// The bounded store's index on disk: opening it (journal replay and compaction, then the
// reconciliation with the directory) and appending records to the journal.
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

}  // namespace

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

}  // namespace kvfdp::gpu
