// cgroup v2 paths <-> ids (the cgroup directory's inode number).
#include "common/cgroups.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <vector>

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

Result<std::string> cgroup_path_of(const std::string &root, uint64_t id)
{
	// Breadth-first over the hierarchy; cgroup trees are small.
	std::vector<std::string> todo{""};
	for (size_t i = 0; i < todo.size(); i++) {
		const std::string rel = todo[i];
		const std::string dir = root + rel;
		struct stat st {};
		if (::stat(dir.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_ino) == id)
			return rel.empty() ? std::string("/") : rel;
		DIR *d = ::opendir(dir.c_str());
		if (!d)
			continue;
		while (dirent *e = ::readdir(d)) {
			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			todo.push_back(rel + "/" + e->d_name);
		}
		::closedir(d);
	}
	return make_error(std::errc::no_such_file_or_directory,
			  "no cgroup with id " + std::to_string(id) + " under " + root);
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
