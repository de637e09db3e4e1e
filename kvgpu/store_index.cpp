// The bounded store's index in memory: its entries in age order, capacity reservations,
// eviction by policy and the reclaimer that unlinks evicted files (opening it, the journal
// and the reconciliation with the directory are store_journal.cpp's).
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
