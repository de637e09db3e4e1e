// Per-file lifetime records and lifetime histograms from tagger events.
#include "bpf/user/files.hpp"

#include <cstring>

namespace kvfdp::bpf {

int LifetimeHistogram::bucket_of(uint64_t lifetime_ns)
{
	uint64_t us = lifetime_ns / 1000;
	int b = 0;
	while (us > 1 && b < kBuckets - 1) {
		us >>= 1;
		b++;
	}
	return b;
}

void LifetimeHistogram::add(uint64_t lifetime_ns)
{
	buckets_[bucket_of(lifetime_ns)]++;
	count_++;
	sum_ns_ += lifetime_ns;
}

FileRecord &FileTable::record(const kvfdp_event &e)
{
	const Key key{e.dev, e.ino};
	if (auto it = live_.find(key); it != live_.end())
		return it->second.r;
	while (live_.size() >= max_live_ && !order_.empty()) {
		erase_live(live_.find(order_.begin()->second));
		live_evictions_++;
	}
	auto it = live_.try_emplace(key).first;
	it->second.seq = next_seq_++;
	order_.emplace(it->second.seq, key);
	FileRecord &r = it->second.r;
	r.dev = e.dev;
	r.ino = e.ino;
	return r;
}

void FileTable::erase_live(std::map<Key, Live>::iterator it)
{
	if (it == live_.end())
		return;
	order_.erase(it->second.seq);
	live_.erase(it);
}

void FileTable::set_writer(uint32_t dev, uint64_t ino, uint32_t writer)
{
	if (auto it = live_.find(Key{dev, ino}); it != live_.end())
		it->second.r.writer = writer;
}

void FileTable::on_event(const kvfdp_event &e)
{
	switch (e.type) {
	case KVFDP_EV_CREATE: {
		// A create of a known (dev, ino) means the inode number was reused.
		FileRecord &r = record(e);
		r = FileRecord{};
		r.dev = e.dev;
		r.ino = e.ino;
		r.birth_ns = e.t_ns;
		r.pid = e.pid;
		r.comm.assign(e.comm, strnlen(e.comm, sizeof(e.comm)));
		r.writer = e.writer;
		r.cgroup_id = e.cgroup_id;
		r.subtree_ino = e.subtree_ino;
		if (e.value < KVFDP_NR_CLASSES) {
			r.cls = static_cast<uint8_t>(e.value);
			r.cls_from_rule = true;
		}
		break;
	}
	case KVFDP_EV_HINT: {
		FileRecord &r = record(e);
		if (e.value < KVFDP_NR_CLASSES) {
			r.cls = static_cast<uint8_t>(e.value);
			r.cls_from_rule = false;
		}
		if (!r.pid) {
			r.pid = e.pid;
			r.comm.assign(e.comm, strnlen(e.comm, sizeof(e.comm)));
		}
		break;
	}
	case KVFDP_EV_UNLINK: {
		auto it = live_.find(Key{e.dev, e.ino});
		if (e.value > 1)  // other links remain
			break;
		FileRecord r;
		if (it != live_.end()) {
			r = std::move(it->second.r);
			erase_live(it);
		} else {
			r.dev = e.dev;
			r.ino = e.ino;
		}
		if (e.bytes)
			r.bytes = e.bytes;
		r.death_ns = e.t_ns;
		if (uint64_t l = r.lifetime_ns())
			hist_[r.cls < KVFDP_NR_CLASSES ? r.cls : 0].add(l);
		dead_.push_back(std::move(r));
		while (dead_.size() > max_dead_)
			dead_.pop_front();
		break;
	}
	default: break;
	}
}

void FileTable::refresh_bytes(const std::function<uint64_t(uint32_t, uint64_t)> &lookup)
{
	for (auto &[k, l] : live_)
		l.r.bytes = lookup(k.first, k.second);
}

const FileRecord *FileTable::find_live(uint32_t dev, uint64_t ino) const
{
	auto it = live_.find(Key{dev, ino});
	return it == live_.end() ? nullptr : &it->second.r;
}

const FileRecord *FileTable::find_dead(uint32_t dev, uint64_t ino) const
{
	for (auto it = dead_.rbegin(); it != dead_.rend(); ++it)
		if (it->dev == dev && it->ino == ino)
			return &*it;
	return nullptr;
}

std::vector<FileRecord> FileTable::live() const
{
	std::vector<FileRecord> out;
	out.reserve(live_.size());
	for (const auto &[k, l] : live_)
		out.push_back(l.r);
	return out;
}

}  // namespace kvfdp::bpf
