// HostDisk (files and in-place writes under one clock) and HiCache's page-file store.
#include "model/workload/hicache.hpp"

#include <algorithm>

#include "bpf/tag.h"

namespace kvfdp::workload {

HostDisk::HostDisk(BlockFs &fs, sim::BlockSink &sink, uint32_t lbas_per_block, uint64_t raw_blocks,
		   sim::Placement placement, LifetimeRecorder *rec,
		   const std::vector<uint8_t> *oracle)
    : fs_(fs), sink_(sink), lbas_per_block_(lbas_per_block), raw_blocks_(raw_blocks),
      placement_(placement), rec_(rec), oracle_(oracle)
{
}

uint8_t HostDisk::classify(uint8_t hint, uint64_t version) const
{
	switch (placement_) {
	case sim::Placement::none: return KVFDP_CLASS_NOT_SET;
	case sim::Placement::oracle:
		return oracle_ && version < oracle_->size() ? (*oracle_)[version]
							    : uint8_t{KVFDP_CLASS_EXTREME};
	default: return hint;
	}
}

uint64_t HostDisk::birth(uint64_t bytes)
{
	const uint64_t v = rec_ ? rec_->birth(clock_, bytes) : versions_;
	versions_++;
	return v;
}

bool HostDisk::create(uint64_t blocks, uint8_t hint, uint64_t writer, FileExtents &out)
{
	if (blocks > fs_.free_blocks())
		return false;
	const uint8_t cls = classify(hint, versions_);
	if (!fs_.create(blocks * BlockFs::kBlockSize, cls, out, writer))
		return false;
	out.version = birth(blocks * BlockFs::kBlockSize);
	clock_ += blocks * BlockFs::kBlockSize;
	return true;
}

void HostDisk::unlink(FileExtents &f)
{
	if (rec_)
		rec_->death(f.version, clock_);
	fs_.unlink(f);
}

void HostDisk::write_raw(uint64_t block, uint64_t n, uint8_t hint, uint64_t writer,
			 uint64_t &version)
{
	if (rec_ && version != LifetimeRecorder::kNever)
		rec_->death(version, clock_);
	const uint8_t cls = classify(hint, versions_);
	version = birth(n * BlockFs::kBlockSize);
	sink_.write(block * lbas_per_block_, n * lbas_per_block_, cls, writer);
	clock_ += n * BlockFs::kBlockSize;
}

HiCacheStore::HiCacheStore(HostDisk &disk, HiCacheConfig cfg) : disk_(disk), cfg_(cfg) {}

void HiCacheStore::touch(Page &p, uint64_t key)
{
	lru_.erase(p.lru);
	p.lru = lru_.insert(lru_.end(), key);
}

void HiCacheStore::evict_for(uint64_t blocks)
{
	if (used_ + blocks <= cfg_.cap_blocks)
		return;
	st_.eviction_batches++;
	const auto floor =
		static_cast<uint64_t>(static_cast<double>(cfg_.cap_blocks) * cfg_.eviction_ratio);
	const uint64_t target = floor > blocks ? floor - blocks : 0;
	while (used_ > target && !lru_.empty()) {
		const uint64_t key = lru_.front();
		lru_.pop_front();
		auto it = pages_.find(key);
		used_ -= it->second.file.blocks;
		disk_.unlink(it->second.file);
		pages_.erase(it);
		st_.pages_unlinked++;
		if (unlinks_)
			unlinks_->push_back(key);
	}
}

void HiCacheStore::set(uint64_t key)
{
	if (auto it = pages_.find(key); it != pages_.end()) {
		touch(it->second, key);
		return;
	}
	evict_for(cfg_.page_blocks);
	Page p;
	if (!disk_.create(cfg_.page_blocks, cfg_.hint, cfg_.writer, p.file)) {
		st_.write_failures++;
		return;
	}
	used_ += p.file.blocks;
	p.lru = lru_.insert(lru_.end(), key);
	pages_.emplace(key, std::move(p));
	st_.pages_written++;
}

void HiCacheStore::request(const MooncakeRequest &r, uint64_t id_shift)
{
	st_.requests++;
	const uint64_t n = r.hash_ids.size() * cfg_.pages_per_block;
	auto key_of = [&](uint64_t i) {
		return (r.hash_ids[i / cfg_.pages_per_block] + id_shift) * cfg_.pages_per_block +
		       i % cfg_.pages_per_block;
	};
	// Prefetch: the longest run of pages on disk from the start is read.
	uint64_t i = 0;
	for (; i < n; i++) {
		const uint64_t key = key_of(i);
		auto it = pages_.find(key);
		if (it == pages_.end())
			break;
		touch(it->second, key);
	}
	st_.lookups += n;
	st_.hits += i;
	// Write-through backup of the rest (a page present after a gap is only touched).
	for (; i < n; i++)
		set(key_of(i));
}

}  // namespace kvfdp::workload
