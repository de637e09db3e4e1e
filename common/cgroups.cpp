// cgroup v2 paths <-> ids (the cgroup directory's inode number).
#include "common/cgroups.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/unique_fd.hpp"

namespace kvfdp {

Result<std::string> cgroup2_mount(const std::string &mountinfo)
{
	std::ifstream in(mountinfo);
	if (!in)
		return errno_error(errno ? errno : ENOENT, "read " + mountinfo);
	std::string line;
	while (std::getline(in, line)) {
		// "36 35 0:31 / /sys/fs/cgroup rw,... shared:9 - cgroup2 cgroup2 rw"
		const size_t dash = line.find(" - ");
		if (dash == std::string::npos)
			continue;
		std::istringstream tail(line.substr(dash + 3));
		std::string fstype;
		tail >> fstype;
		if (fstype != "cgroup2")
			continue;
		std::istringstream head(line.substr(0, dash));
		std::string id, parent, devno, root, mnt;
		head >> id >> parent >> devno >> root >> mnt;
		if (!mnt.empty())
			return mnt;
	}
	return guidance_error(
		std::errc::no_such_file_or_directory,
		"no cgroup2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup); "
		"writers are then known by cgroup id only");
}

Result<uint64_t> cgroup_id_of(const std::string &root, const std::string &path)
{
	const std::string full = root + (path == "/" ? "" : path);
	struct stat st {};
	if (::stat(full.c_str(), &st) != 0)
		return errno_error(errno, "cgroup " + path + " (" + full + ")");
	if (!S_ISDIR(st.st_mode))
		return make_error(std::errc::not_a_directory, full + " is not a cgroup directory");
	return static_cast<uint64_t>(st.st_ino);
}

Result<std::string> cgroup_path_of(const std::string &root, uint64_t id, size_t max_dirs)
{
	for (const std::string &rel : cgroup_paths_under(root, max_dirs)) {
		struct stat st {};
		const std::string dir = root + (rel == "/" ? "" : rel);
		if (::stat(dir.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_ino) == id)
			return rel;
	}
	return make_error(std::errc::no_such_file_or_directory,
			  "no cgroup with id " + std::to_string(id) + " under " + root);
}

std::vector<std::string> cgroup_paths_under(const std::string &root, size_t max_dirs)
{
	std::vector<std::string> todo{""};
	for (size_t i = 0; i < todo.size(); i++) {
		const std::string dir = root + todo[i];
		DIR *d = ::opendir(dir.c_str());
		if (!d)
			continue;
		while (dirent *e = ::readdir(d)) {
			if (todo.size() >= max_dirs)
				break;
			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			todo.push_back(todo[i] + "/" + e->d_name);
		}
		::closedir(d);
	}
	todo[0] = "/";
	return todo;
}

std::string cgroup_v2_line(const std::string &text)
{
	size_t at = 0;
	while (at < text.size()) {
		size_t end = text.find('\n', at);
		if (end == std::string::npos)
			end = text.size();
		if (text.compare(at, 3, "0::") == 0)
			return text.substr(at + 3, end - at - 3);
		at = end + 1;
	}
	return "";
}

Result<std::string> cgroup_path_of_pid(const std::string &root, uint32_t pid, uint64_t id)
{
	std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
	if (!in)
		return make_error(std::errc::no_such_process, "process " + std::to_string(pid));
	std::stringstream ss;
	ss << in.rdbuf();
	const std::string path = cgroup_v2_line(ss.str());
	if (path.empty() || path.find(" (deleted)") != std::string::npos)
		return make_error(std::errc::no_such_file_or_directory,
				  "process " + std::to_string(pid) + " has no cgroup v2 path");
	auto got = cgroup_id_of(root, path);
	if (!got || *got != id)
		return make_error(std::errc::no_such_file_or_directory,
				  "process " + std::to_string(pid) + " left cgroup " +
					  std::to_string(id));
	return path;
}

Result<std::string> cgroup_path_by_handle(const std::string &root, uint64_t id)
{
	// struct file_handle followed by its bytes (MAX_HANDLE_SZ is 128).
	struct Handle {
		file_handle fh;
		unsigned char bytes[128];
	};
	Handle h{};
	h.fh.handle_bytes = sizeof(h.bytes);
	int mount_id = 0;
	// The root's own handle gives the type kernfs uses (FILEID_KERNFS, 0xfe, since 5.5).
	if (::name_to_handle_at(AT_FDCWD, root.c_str(), &h.fh, &mount_id, 0) != 0)
		return errno_error(errno, "name_to_handle_at " + root);
	if (h.fh.handle_bytes != sizeof(id))
		return make_error(std::errc::not_supported,
				  root + ": its file handles are not 8-byte kernfs ids");
	std::memcpy(h.fh.f_handle, &id, sizeof(id));
	UniqueFd mnt(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!mnt)
		return errno_error(errno, "open " + root);
	UniqueFd fd(::open_by_handle_at(mnt.get(), &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!fd)
		return errno_error(errno, "open_by_handle_at cgroup " + std::to_string(id));
	char buf[4096];
	const std::string link = "/proc/self/fd/" + std::to_string(fd.get());
	const ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf));
	if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf))
		return errno_error(n < 0 ? errno : ENAMETOOLONG, "readlink " + link);
	std::string path(buf, static_cast<size_t>(n));
	if (path.compare(0, root.size(), root) != 0)
		return make_error(std::errc::no_such_file_or_directory,
				  "cgroup " + std::to_string(id) + " is at " + path + ", outside " +
					  root);
	path.erase(0, root.size());
	return path.empty() ? std::string("/") : path;
}

void CgroupPaths::set_root(std::string root)
{
	std::lock_guard g(mu_);
	root_ = std::move(root);
	root_looked_up_ = true;
	cache_.clear();
}

std::string CgroupPaths::resolve(uint64_t id, uint32_t pid)
{
	std::lock_guard g(mu_);
	if (const std::string *p = cache_.find(id))
		if (!p->empty() || !pid)
			return *p;
	if (!root_looked_up_) {
		auto r = cgroup2_mount();
		root_ = r ? *r : "";
		root_looked_up_ = true;
	}
	std::string path;
	if (!root_.empty() && pid) {
		if (auto p = cgroup_path_of_pid(root_, pid, id)) {
			path = *p;
			counts_.by_pid++;
		}
	}
	if (!root_.empty() && path.empty()) {
		if (auto h = cgroup_path_by_handle(root_, id)) {
			path = *h;
			counts_.by_handle++;
		}
	}
	if (path.empty())
		counts_.unresolved++;
	cache_.put(id, path);
	return path;
}

CgroupPaths::Stats CgroupPaths::stats()
{
	std::lock_guard g(mu_);
	Stats s = counts_;
	s.entries = cache_.size();
	s.capacity = cache_.capacity();
	s.evictions = cache_.evictions();
	return s;
}

Result<std::string> self_cgroup_path()
{
	std::ifstream in("/proc/self/cgroup");
	std::string line;
	while (std::getline(in, line))
		if (line.rfind("0::", 0) == 0)
			return line.substr(3);
	return make_error(std::errc::no_such_file_or_directory,
			  "/proc/self/cgroup has no cgroup v2 (0::) line");
}

}  // namespace kvfdp
