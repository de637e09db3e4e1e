// The namespace claim (ns_claim.hpp).
#include "kvfdpd/daemon/ctl/ns_claim.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvme/paths.hpp"
#include "kvfdpd/daemon/ctl/stop_choice.hpp"

namespace kvfdp::daemon {

namespace {

std::string read_line(const std::string &path)
{
	std::ifstream in(path);
	std::string s;
	std::getline(in, s);
	return s;
}

// The "maj:min" of a disk and of its partitions, from sysfs.
std::vector<std::string> disk_and_partition_devs(const std::string &disk)
{
	std::vector<std::string> devs;
	const std::string sys = "/sys/block/" + disk;
	if (std::string d = read_line(sys + "/dev"); !d.empty())
		devs.push_back(d);
	if (DIR *dir = ::opendir(sys.c_str())) {
		while (dirent *de = ::readdir(dir)) {
			const std::string p = sys + "/" + de->d_name;
			if (de->d_name[0] != '.' && ::access((p + "/partition").c_str(), F_OK) == 0)
				if (std::string d = read_line(p + "/dev"); !d.empty())
					devs.push_back(d);
		}
		::closedir(dir);
	}
	return devs;
}

// The holders of a disk and of its partitions (dm, md, ...).
std::vector<std::string> all_holders(const std::string &disk)
{
	const std::string sys = "/sys/block/" + disk;
	std::vector<std::string> out = disk_holders(sys + "/holders");
	if (DIR *dir = ::opendir(sys.c_str())) {
		while (dirent *de = ::readdir(dir)) {
			const std::string p = sys + "/" + de->d_name;
			if (de->d_name[0] != '.' && ::access((p + "/partition").c_str(), F_OK) == 0)
				for (const std::string &h : disk_holders(p + "/holders"))
					out.push_back(h);
		}
		::closedir(dir);
	}
	return out;
}

std::string join(const std::vector<std::string> &v, const char *sep)
{
	std::string s;
	for (const std::string &x : v)
		s += (s.empty() ? "" : sep) + x;
	return s;
}

// Who makes node busy, for the refusal.
std::string who_uses(const std::string &node, const std::string &block,
		     const std::function<std::string(int)> &served_by)
{
	std::vector<std::string> paths{node};
	if (!block.empty() && block != node)
		paths.push_back(block);
	const Opener opener = other_opener(paths);
	if (opener.pid && opener.comm == "kvfdpd") {
		const std::string disk = served_by ? served_by(opener.pid) : std::string();
		return opener.text() + " serves " + opener.path +
		       (disk.empty() ? "" : " as " + disk) +
		       ": stop it first, or serve another namespace";
	}
	if (!block.empty()) {
		std::ifstream in("/proc/self/mountinfo");
		std::stringstream ss;
		ss << in.rdbuf();
		const std::vector<std::string> mounts =
			mounts_of(ss.str(), disk_and_partition_devs(nvme::base_name(block)));
		if (!mounts.empty())
			return block + " is mounted at " + join(mounts, ", ") +
			       ": unmount it first (kvfdpd would write under its filesystem)";
		const std::vector<std::string> holders = all_holders(nvme::base_name(block));
		if (!holders.empty())
			return block + " is held by " + join(holders, ", ") + ": release it first";
	}
	if (opener.pid)
		return node + " is in use by " + opener.text() +
		       ": stop it first, or serve another namespace";
	return node + " is in use (exclusively claimed by something else)";
}

}  // namespace

std::string namespace_block_path(const std::string &node)
{
	// A link (/dev/disk/by-id/nvme-...) stands for its target, whose name sysfs knows.
	char real[PATH_MAX];
	const std::string path = ::realpath(node.c_str(), real) ? std::string(real) : node;
	struct stat st {};
	if (::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode))
		return path;  // a block device (the streams backend's /dev/nvmeXnY) is its own
	const std::string block = nvme::ng_block_name(nvme::base_name(path));
	return !block.empty() && ::access(("/sys/block/" + block).c_str(), F_OK) == 0
		       ? "/dev/" + block
		       : "";
}

std::vector<std::string> mounts_of(std::string_view mountinfo, const std::vector<std::string> &devs)
{
	std::vector<std::string> out;
	size_t pos = 0;
	while (pos < mountinfo.size()) {
		size_t end = mountinfo.find('\n', pos);
		if (end == std::string_view::npos)
			end = mountinfo.size();
		std::istringstream ls{std::string(mountinfo.substr(pos, end - pos))};
		std::string id, parent, majmin, root, point;
		if (ls >> id >> parent >> majmin >> root >> point)
			for (const std::string &d : devs)
				if (majmin == d)
					out.push_back(point);
		pos = end + 1;
	}
	return out;
}

Opener other_opener(const std::vector<std::string> &paths)
{
	const int self = ::getpid();
	Opener found;
	DIR *proc = ::opendir("/proc");
	if (!proc)
		return found;
	while (dirent *pe = ::readdir(proc)) {
		const int pid = std::atoi(pe->d_name);
		if (pid <= 0 || pid == self)
			continue;
		const std::string fd_dir = std::string("/proc/") + pe->d_name + "/fd";
		DIR *fds = ::opendir(fd_dir.c_str());
		if (!fds)
			continue;
		while (!found.pid) {
			const dirent *fe = ::readdir(fds);
			if (!fe)
				break;
			char target[256];
			const ssize_t n = ::readlink((fd_dir + "/" + fe->d_name).c_str(), target,
						     sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = 0;
			for (const std::string &p : paths)
				if (p == target) {
					found = Opener{pid,
						       read_line(std::string("/proc/") +
								 pe->d_name + "/comm"),
						       p};
					break;
				}
		}
		::closedir(fds);
		if (found.pid)
			break;
	}
	::closedir(proc);
	return found;
}

Result<NsClaim> claim_namespace(const std::string &node,
				const std::function<std::string(int)> &served_by)
{
	NsClaim c;
	c.block_path = namespace_block_path(node);
	const int lfd = ::open(node.c_str(), O_RDONLY | O_CLOEXEC);
	if (lfd < 0)
		return errno_error(errno, "open " + node);
	c.lock.reset(lfd);
	if (::flock(lfd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK)
			return errno_error(errno, "flock " + node);
		return guidance_error(std::errc::device_or_resource_busy,
				      who_uses(node, c.block_path, served_by));
	}
	if (c.block_path.empty())
		return c;
	// O_EXCL on a block device (no O_CREAT) is an exclusive claim: EBUSY while it (or a
	// partition) is mounted or claimed by dm/md/swap or another O_EXCL opener. No I/O.
	const int bfd = ::open(c.block_path.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
	if (bfd < 0) {
		if (errno != EBUSY)
			return errno_error(errno, "open " + c.block_path + " (O_EXCL)");
		return guidance_error(std::errc::device_or_resource_busy,
				      who_uses(node, c.block_path, served_by));
	}
	c.block.reset(bfd);
	return c;
}

}  // namespace kvfdp::daemon
