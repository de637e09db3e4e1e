// The tagger's watched disks: adding one (its counter index, its request disks, its
// partitions as filesystems), removing one, and reading its counters.
#include "bpf/user/tagger.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <string>
#include <vector>

#include "bpf/user/devnum.hpp"
#include "bpf/user/disks.hpp"
#include "bpf/user/tagger_impl.hpp"

namespace kvfdp::bpf {

namespace {

// The keys of a map with kvfdp_disk values (disks, disk_names) whose counter index is index.
template <class Key> std::vector<Key> keys_of_disk(int fd, uint32_t index)
{
	std::vector<Key> out;
	Key key{}, next{};
	Key *prev = nullptr;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		kvfdp_disk o{};
		if (bpf_map_lookup_elem(fd, &next, &o) == 0 && o.index == index)
			out.push_back(next);
		key = next;
		prev = &key;
	}
	return out;
}

// The lowest counter index no watched disk of the disks map (fd) holds; KVFDP_MAX_DISKS when
// every one is taken.
uint32_t free_disk_index(int fd)
{
	bool used[KVFDP_MAX_DISKS] = {};
	uint32_t key = 0, next = 0;
	uint32_t *prev = nullptr;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		kvfdp_disk d{};
		if (bpf_map_lookup_elem(fd, &next, &d) == 0 && d.index < KVFDP_MAX_DISKS)
			used[d.index] = true;
		key = next;
		prev = &key;
	}
	uint32_t idx = 0;
	while (idx < KVFDP_MAX_DISKS && used[idx])
		idx++;
	return idx;
}

// Starts the counters of disk index idx from zero (per CPU: ncpus values each).
void zero_disk_counters(tagger *skel, int ncpus, uint32_t idx)
{
	std::vector<kvfdp_counter> zero(ncpus);
	for (uint32_t opg = 0; opg < KVFDP_NR_OPGS; opg++)
		for (uint32_t c = 0; c < KVFDP_NR_CLASSES; c++) {
			uint32_t ci = (idx * KVFDP_NR_OPGS + opg) * KVFDP_NR_CLASSES + c;
			bpf_map_update_elem(bpf_map__fd(skel->maps.counters), &ci, zero.data(),
					    BPF_ANY);
		}
	std::vector<uint64_t> z(ncpus);
	for (uint32_t s = 0; s < KVFDP_NR_SOURCES; s++) {
		uint32_t si = idx * KVFDP_NR_SOURCES + s;
		bpf_map_update_elem(bpf_map__fd(skel->maps.source_counters), &si, z.data(),
				    BPF_ANY);
	}
}

// The gendisks the requests of disk devt are issued on (an NVMe multipath head's path
// disks) share its entry d and counters. Hidden ones have no dev_t in sysfs: named, learned
// in BPF.
void share_with_request_disks(tagger *skel, uint32_t devt, const kvfdp_disk &d)
{
	const int fd = bpf_map__fd(skel->maps.disks);
	for (const RequestDisk &p : request_disks(devt)) {
		if (p.via == "itself")
			continue;
		if (p.devt) {
			bpf_map_update_elem(fd, &p.devt, &d, BPF_ANY);
			continue;
		}
		kvfdp_disk_name name{};
		p.name.copy(name.name, sizeof(name.name) - 1);
		int nfd = bpf_map__fd(skel->maps.disk_names);
		if (bpf_map_update_elem(nfd, &name, &d, BPF_NOEXIST) == 0)
			__atomic_fetch_add(&skel->bss->disk_names_pending, 1, __ATOMIC_SEQ_CST);
		else
			bpf_map_update_elem(nfd, &name, &d, BPF_EXIST);
	}
}

}  // namespace

Result<void> Tagger::watch_disk(const std::string &path, uint32_t flags)
{
	auto dev = disk_dev(path);
	if (!dev)
		return std::move(dev).error();
	return watch_disk_dev(*dev, flags);
}

Result<void> Tagger::watch_disk_dev(uint32_t devt, uint32_t flags)
{
	int fd = bpf_map__fd(impl_->skel->maps.disks);
	kvfdp_disk cur{};
	if (bpf_map_lookup_elem(fd, &devt, &cur) == 0) {
		cur.flags = flags;
		if (bpf_map_update_elem(fd, &devt, &cur, BPF_EXIST) != 0)
			return errno_error(errno, "tagger: update watched disk");
		return ok();
	}
	const uint32_t idx = free_disk_index(fd);
	if (idx == KVFDP_MAX_DISKS)
		return make_error(std::errc::no_space_on_device,
				  "tagger: already watching " + std::to_string(KVFDP_MAX_DISKS) +
					  " disks");
	zero_disk_counters(impl_->skel, impl_->ncpus, idx);
	kvfdp_disk d{idx, flags};
	if (bpf_map_update_elem(fd, &devt, &d, BPF_NOEXIST) != 0)
		return errno_error(errno, "tagger: add watched disk");
	KVFDP_TRY(watch_filesystem(devt));
	share_with_request_disks(impl_->skel, devt, d);
	// Its partitions, as filesystems.
	for (const uint32_t part : partition_devs(devt))
		(void)watch_filesystem(part);
	return ok();
}

Result<void> Tagger::unwatch_disk(const std::string &path)
{
	auto dev = disk_dev(path);
	if (!dev)
		return std::move(dev).error();
	uint32_t devt = *dev;
	int fd = bpf_map__fd(impl_->skel->maps.disks);
	kvfdp_disk d{};
	if (bpf_map_lookup_elem(fd, &devt, &d) != 0 || bpf_map_delete_elem(fd, &devt) != 0)
		return errno_error(ENOENT, "tagger: " + path + " is not watched");
	// Its path disks carry the same index: learned ones by dev_t, the rest still by name.
	for (uint32_t k : keys_of_disk<uint32_t>(fd, d.index))
		bpf_map_delete_elem(fd, &k);
	int nfd = bpf_map__fd(impl_->skel->maps.disk_names);
	for (const auto &n : keys_of_disk<kvfdp_disk_name>(nfd, d.index))
		if (bpf_map_delete_elem(nfd, &n) == 0)
			__atomic_fetch_sub(&impl_->skel->bss->disk_names_pending, 1,
					   __ATOMIC_SEQ_CST);
	bpf_map_delete_elem(bpf_map__fd(impl_->skel->maps.watched_fs), &devt);
	return ok();
}

Result<void> Tagger::watch_filesystem(uint32_t s_dev)
{
	uint32_t one = 1;
	if (bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.watched_fs), &s_dev, &one, BPF_ANY) !=
	    0)
		return errno_error(errno, "tagger: watch filesystem");
	return ok();
}

Result<DiskCounters> Tagger::counters(const std::string &disk) const
{
	auto dev = disk_dev(disk);
	if (!dev)
		return std::move(dev).error();
	return counters_dev(*dev);
}

Result<DiskCounters> Tagger::counters_dev(uint32_t devt) const
{
	kvfdp_disk d{};
	if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.disks), &devt, &d) != 0)
		return make_error(std::errc::no_such_device, "tagger: that disk is not watched");
	DiskCounters out;
	std::vector<kvfdp_counter> per(impl_->ncpus);
	for (uint32_t opg = 0; opg < KVFDP_NR_OPGS; opg++)
		for (uint32_t c = 0; c < KVFDP_NR_CLASSES; c++) {
			uint32_t ci = (d.index * KVFDP_NR_OPGS + opg) * KVFDP_NR_CLASSES + c;
			if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.counters), &ci,
						per.data()) != 0)
				return errno_error(errno, "tagger: read counters");
			kvfdp_counter sum{};
			for (const auto &p : per) {
				sum.requests += p.requests;
				sum.bytes += p.bytes;
			}
			(opg == KVFDP_OPG_WRITE ? out.write : out.discard)[c] = sum;
		}
	std::vector<uint64_t> v(impl_->ncpus);
	for (uint32_t s = 0; s < KVFDP_NR_SOURCES; s++) {
		uint32_t si = d.index * KVFDP_NR_SOURCES + s;
		if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.source_counters), &si,
					v.data()) != 0)
			return errno_error(errno, "tagger: read source counters");
		for (uint64_t x : v)
			out.sources[s] += x;
	}
	return out;
}

}  // namespace kvfdp::bpf
