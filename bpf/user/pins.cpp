// Pinning the tagger's links and maps in bpffs (pins.hpp).
#include "bpf/user/pins.hpp"

#include <bpf/bpf.h>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fnv.hpp"
#include "common/unique_fd.hpp"

namespace kvfdp::bpf {

uint64_t object_hash(const void *bytes, size_t size)
{
	return fnv1a_bytes(bytes, size);
}

Result<void> make_pin_dir(const std::string &dir)
{
	for (size_t pos = 1; pos <= dir.size(); pos++) {
		if (pos != dir.size() && dir[pos] != '/')
			continue;
		const std::string part = dir.substr(0, pos);
		if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
			return errno_error(errno, "mkdir " + part);
	}
	return ok();
}

Result<void> pin_fd(int fd, const std::string &path)
{
	if (bpf_obj_pin(fd, path.c_str()) != 0)
		return errno_error(errno, "pin " + path);
	return ok();
}

int open_pinned(const std::string &path)
{
	const int fd = bpf_obj_get(path.c_str());
	return fd >= 0 ? fd : -errno;
}

Result<void> pin_meta(const std::string &dir, const PinMeta &meta)
{
	const int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "kvfdp_meta", sizeof(uint32_t),
				      sizeof(PinMeta), 1, nullptr);
	if (fd < 0)
		return errno_error(errno, "create the pinned set's meta map");
	UniqueFd own(fd);
	const uint32_t key = 0;
	if (bpf_map_update_elem(fd, &key, &meta, BPF_ANY) != 0)
		return errno_error(errno, "write the pinned set's meta map");
	return pin_fd(fd, dir + "/meta");
}

Result<PinMeta> read_meta(const std::string &dir)
{
	const int fd = open_pinned(dir + "/meta");
	if (fd < 0)
		return errno_error(-fd, dir + "/meta");
	UniqueFd own(fd);
	bpf_map_info info{};
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
		return errno_error(errno, dir + "/meta");
	if (info.value_size != sizeof(PinMeta))
		return make_error(std::errc::invalid_argument,
				  dir + "/meta is from another kvfdpd build");
	PinMeta m{};
	const uint32_t key = 0;
	if (bpf_map_lookup_elem(fd, &key, &m) != 0)
		return errno_error(errno, dir + "/meta");
	return m;
}

Result<void> remove_pin_dir(const std::string &dir)
{
	DIR *d = ::opendir(dir.c_str());
	if (!d)
		return errno == ENOENT ? ok() : errno_error(errno, "open " + dir);
	int err = 0;
	// meta first: a set that is half removed is incomplete, never mistaken for a whole one.
	if (::unlink((dir + "/meta").c_str()) != 0 && errno != ENOENT)
		err = errno;
	while (dirent *de = ::readdir(d)) {
		if (std::strcmp(de->d_name, ".") == 0 || std::strcmp(de->d_name, "..") == 0)
			continue;
		if (::unlink((dir + "/" + de->d_name).c_str()) != 0 && errno != ENOENT)
			err = errno;
	}
	::closedir(d);
	if (::rmdir(dir.c_str()) != 0 && errno != ENOENT)
		err = errno;
	if (err)
		return errno_error(err, "unpin " + dir);
	return ok();
}

}  // namespace kvfdp::bpf
