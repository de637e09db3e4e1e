// The held-disk check and the remove-or-leave choice kvfdpd makes on SIGTERM, and the holder
// named by a refused `kvfdp stop`.
#include "kvfdpd/daemon/ctl/stop_choice.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "kvfdpd/daemon/ctl/ns_claim.hpp"

namespace kvfdp::daemon {

Held held_from_open_errno(int err)
{
	if (err == 0)
		return Held::no;
	return err == EBUSY ? Held::yes : Held::unknown;
}

std::vector<std::string> disk_holders(const std::string &holders_dir)
{
	std::vector<std::string> names;
	DIR *d = ::opendir(holders_dir.c_str());
	if (!d)
		return names;
	while (const dirent *e = ::readdir(d))
		if (e->d_name[0] != '.')
			names.emplace_back(e->d_name);
	::closedir(d);
	std::sort(names.begin(), names.end());
	return names;
}

DiskUse check_disk_use(const std::string &path, const std::string &holders_dir)
{
	DiskUse u;
	const std::vector<std::string> holders = disk_holders(holders_dir);
	if (!holders.empty()) {
		u.held = Held::yes;
		u.why = "held by";
		for (const std::string &h : holders)
			u.why += " " + h;
		return u;
	}
	// O_EXCL on a block device (no O_CREAT) is an exclusive claim: EBUSY while mounted or
	// claimed. Opening does no I/O; the fd is read-only, so its close writes nothing back.
	const int fd = ::open(path.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
	const int err = fd < 0 ? errno : 0;
	u.held = held_from_open_errno(err);
	if (u.held == Held::no)
		u.claim.reset(fd);
	else if (u.held == Held::yes)
		u.why = "mounted?";
	else
		u.why = std::string("open: ") + std::strerror(err);
	return u;
}

bool should_remove(bool keep, bool force_remove, Held held)
{
	if (keep)
		return false;
	if (force_remove)
		return true;
	return held == Held::no;
}

DiskLookup disk_lookup(const std::string &bdev)
{
	DiskLookup l;
	const size_t slash = bdev.rfind('/');
	l.holders_dir = "/sys/block/" + bdev.substr(slash == std::string::npos ? 0 : slash + 1) +
			"/holders";
	struct stat st {};
	if (::stat(bdev.c_str(), &st) == 0 && S_ISBLK(st.st_mode))
		l.majmin =
			std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
	std::ifstream in("/proc/self/mountinfo");
	std::stringstream ss;
	ss << in.rdbuf();
	l.mountinfo = ss.str();
	l.paths = {bdev};
	return l;
}

std::string disk_holder(const DiskLookup &l)
{
	const std::vector<std::string> holders = disk_holders(l.holders_dir);
	if (!holders.empty()) {
		std::string s = "held by";
		for (const std::string &h : holders)
			s += " " + h;
		return s;
	}
	if (!l.majmin.empty()) {
		const std::vector<std::string> mounts = mounts_of(l.mountinfo, {l.majmin});
		if (!mounts.empty()) {
			std::string s = "mounted at";
			for (size_t i = 0; i < mounts.size(); i++)
				s += (i ? ", " : " ") + mounts[i];
			return s;
		}
	}
	const Opener o = other_opener(l.paths);
	return o.pid ? "open by " + o.text() : std::string();
}

std::string stop_refusal(const std::string &bdev, const std::string &holder)
{
	return "not stopping: " + bdev + " is " + holder +
	       "; unmount or close it first, or stop anyway with "
	       "`kvfdp stop --force`";
}

}  // namespace kvfdp::daemon
