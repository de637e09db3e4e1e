// The held-disk check and the remove-or-leave choice kvfdpd makes on SIGTERM.
#include "userspace/daemon/stop_choice.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>

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

} // namespace kvfdp::daemon
