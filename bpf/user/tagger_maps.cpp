// The tagger's rule, identity and policy maps: directory rules, writer directories and
// cgroups, writer identities, per-inode policies.
#include "bpf/user/tagger.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <string>
#include <sys/stat.h>

#include "bpf/user/devnum.hpp"
#include "bpf/user/tagger_impl.hpp"

namespace kvfdp::bpf {

namespace {

Result<kvfdp_inode_key> path_key(const std::string &path, bool want_dir)
{
	struct stat st {};
	if (::stat(path.c_str(), &st) != 0)
		return errno_error(errno, "stat " + path);
	if (want_dir && !S_ISDIR(st.st_mode))
		return make_error(std::errc::not_a_directory, path + " is not a directory");
	kvfdp_inode_key k{};
	k.dev = kernel_dev(st.st_dev);
	k.ino = st.st_ino;
	return k;
}

// Sets directory dir's entry of a (dev, ino)-keyed map to v; the error line is "tagger: " +
// what + dir.
Result<void> put_dir(bpf_map *map, const std::string &dir, uint32_t v, const char *what)
{
	auto k = path_key(dir, true);
	if (!k)
		return std::move(k).error();
	if (bpf_map_update_elem(bpf_map__fd(map), &*k, &v, BPF_ANY) != 0)
		return errno_error(errno, std::string("tagger: ") + what + dir);
	return ok();
}

// Deletes directory dir's entry of such a map; the error line as put_dir's.
Result<void> drop_dir(bpf_map *map, const std::string &dir, const char *what)
{
	auto k = path_key(dir, true);
	if (!k)
		return std::move(k).error();
	if (bpf_map_delete_elem(bpf_map__fd(map), &*k) != 0)
		return errno_error(errno, std::string("tagger: ") + what + dir);
	return ok();
}

}  // namespace

Result<void> Tagger::add_dir_rule(const std::string &dir, uint8_t cls)
{
	if (cls >= KVFDP_NR_CLASSES)
		return make_error(std::errc::invalid_argument, "tagger: class must be 0..5");
	return put_dir(impl_->skel->maps.dir_rules, dir, cls, "add directory rule for ");
}

Result<void> Tagger::remove_dir_rule(const std::string &dir)
{
	return drop_dir(impl_->skel->maps.dir_rules, dir, "no directory rule for ");
}

Result<void> Tagger::add_writer_dir(const std::string &dir, uint32_t writer)
{
	return put_dir(impl_->skel->maps.dir_writers, dir, writer, "add writer directory ");
}

Result<void> Tagger::remove_writer_dir(const std::string &dir)
{
	return drop_dir(impl_->skel->maps.dir_writers, dir, "no writer directory ");
}

Result<void> Tagger::add_writer_cgroup(uint64_t cgroup_id, uint32_t writer)
{
	if (bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.writer_cgroups), &cgroup_id, &writer,
				BPF_ANY) != 0)
		return errno_error(errno, "tagger: add writer cgroup " + std::to_string(cgroup_id));
	return ok();
}

Result<void> Tagger::remove_writer_cgroup(uint64_t cgroup_id)
{
	if (bpf_map_delete_elem(bpf_map__fd(impl_->skel->maps.writer_cgroups), &cgroup_id) != 0)
		return errno_error(errno, "tagger: no writer cgroup " + std::to_string(cgroup_id));
	return ok();
}

namespace {

// Deletes every key of a hash map (fd), one get_next_key from the start each time.
template <class Key> void clear_map(int fd)
{
	Key key{};
	while (bpf_map_get_next_key(fd, nullptr, &key) == 0)
		if (bpf_map_delete_elem(fd, &key) != 0)
			break;
}

// The u32 value of key in map fd, or 0.
template <class Key> uint32_t lookup_u32(int fd, const Key &key)
{
	uint32_t v = 0;
	return bpf_map_lookup_elem(fd, &key, &v) == 0 ? v : 0;
}

}  // namespace

uint32_t Tagger::inode_writer(uint32_t dev, uint64_t ino) const
{
	return lookup_u32(bpf_map__fd(impl_->skel->maps.inode_writer),
			  kvfdp_inode_key{dev, 0, ino});
}

bool Tagger::set_inode_writer(uint32_t dev, uint64_t ino, uint32_t writer)
{
	kvfdp_inode_key k{dev, 0, ino};
	return bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.inode_writer), &k, &writer,
				   BPF_EXIST) == 0;
}

Result<void> Tagger::set_identity(uint64_t cgroup_id, uint32_t dev, uint64_t dir_ino,
				  uint32_t writer)
{
	kvfdp_ident_key k{cgroup_id, dir_ino, dev, 0};
	if (bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.writer_idents), &k, &writer,
				BPF_ANY) != 0)
		return errno_error(errno,
				   "tagger: set the writer of cgroup " + std::to_string(cgroup_id));
	return ok();
}

uint32_t Tagger::identity(uint64_t cgroup_id, uint32_t dev, uint64_t dir_ino) const
{
	return lookup_u32(bpf_map__fd(impl_->skel->maps.writer_idents),
			  kvfdp_ident_key{cgroup_id, dir_ino, dev, 0});
}

void Tagger::clear_identities()
{
	clear_map<kvfdp_ident_key>(bpf_map__fd(impl_->skel->maps.writer_idents));
}

Result<bool> Tagger::set_dir_ident(uint32_t dev, uint64_t dir_ino, uint32_t writer)
{
	const int fd = bpf_map__fd(impl_->skel->maps.dir_idents);
	kvfdp_inode_key k{dev, 0, dir_ino};
	if (bpf_map_update_elem(fd, &k, &writer, BPF_NOEXIST) == 0)
		return true;
	if (errno == EEXIST && bpf_map_update_elem(fd, &k, &writer, BPF_ANY) == 0)
		return false;
	return errno_error(errno, "tagger: set the writer of directory " + std::to_string(dir_ino));
}

uint32_t Tagger::dir_ident(uint32_t dev, uint64_t dir_ino) const
{
	return lookup_u32(bpf_map__fd(impl_->skel->maps.dir_idents),
			  kvfdp_inode_key{dev, 0, dir_ino});
}

size_t Tagger::clear_named_dir_idents()
{
	const int fd = bpf_map__fd(impl_->skel->maps.dir_idents);
	// Collected first: deleting while walking restarts the walk.
	std::vector<kvfdp_inode_key> named;
	kvfdp_inode_key key{}, next{};
	const kvfdp_inode_key *prev = nullptr;
	while (named.size() < KVFDP_DIR_IDENT_MAP_ENTRIES &&
	       bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (lookup_u32(fd, next) & KVFDP_WRITER_NAMED)
			named.push_back(next);
		key = next;
		prev = &key;
	}
	size_t n = 0;
	for (const kvfdp_inode_key &k : named)
		n += bpf_map_delete_elem(fd, &k) == 0 ? 1 : 0;
	return n;
}

Result<void> Tagger::add_ident_dir(const std::string &dir, uint32_t kind)
{
	return put_dir(impl_->skel->maps.ident_dirs, dir, kind, "add identity directory ");
}

void Tagger::clear_ident_dirs()
{
	clear_map<kvfdp_inode_key>(bpf_map__fd(impl_->skel->maps.ident_dirs));
}

void Tagger::clear_dir_rules()
{
	clear_map<kvfdp_inode_key>(bpf_map__fd(impl_->skel->maps.dir_rules));
}

void Tagger::clear_writers()
{
	clear_map<kvfdp_inode_key>(bpf_map__fd(impl_->skel->maps.dir_writers));
	clear_map<uint64_t>(bpf_map__fd(impl_->skel->maps.writer_cgroups));
}

Result<void> Tagger::add_inode_policy(uint32_t dev, uint64_t ino, uint8_t cls)
{
	if (cls >= KVFDP_NR_CLASSES)
		return make_error(std::errc::invalid_argument, "tagger: class must be 0..5");
	kvfdp_inode_key k{dev, 0, ino};
	uint32_t v = cls;
	if (bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.inode_policy), &k, &v, BPF_ANY) != 0)
		return errno_error(errno, "tagger: add inode policy");
	return ok();
}

Result<void> Tagger::add_file_policy(const std::string &path, uint8_t cls)
{
	auto k = path_key(path, false);
	if (!k)
		return std::move(k).error();
	return add_inode_policy(k->dev, k->ino, cls);
}

Result<void> Tagger::remove_inode_policy(uint32_t dev, uint64_t ino)
{
	kvfdp_inode_key k{dev, 0, ino};
	if (bpf_map_delete_elem(bpf_map__fd(impl_->skel->maps.inode_policy), &k) != 0)
		return errno_error(errno, "tagger: no policy for that inode");
	return ok();
}

int Tagger::inode_policy(uint32_t dev, uint64_t ino) const
{
	kvfdp_inode_key k{dev, 0, ino};
	uint32_t v = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(impl_->skel->maps.inode_policy), &k, &v) != 0)
		return -1;
	return static_cast<int>(v);
}
}  // namespace kvfdp::bpf
