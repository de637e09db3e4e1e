// What SIGTERM does with the ublk disk: whether it is held (mounted, a dm/md member, swap)
// and the choice between removing it and leaving it, I/O held, for the next kvfdpd; and who
// holds it open, which refuses a `kvfdp stop` without --force.
#pragma once

#include <string>
#include <vector>

#include "common/unique_fd.hpp"

namespace kvfdp::daemon {

enum class Held { no, yes, unknown };

// The disk's state at stop. When held == no, claim is an exclusive (O_EXCL) open of the
// disk: nothing can mount or claim it until the caller closes it, which must be after
// STOP_DEV and before DEL_DEV (DEL_DEV waits for the disk's last opener).
struct DiskUse {
	Held held = Held::unknown;
	std::string why;  // yes: "mounted?" or "held by dm-0"; unknown: "open: <strerror>"
	UniqueFd claim;
};

// Held from an exclusive open's errno (0 = it succeeded): EBUSY means a filesystem, dm,
// md or swap holds the disk; any other failure means we cannot tell.
[[nodiscard]] Held held_from_open_errno(int err);

// The names in a /sys/block/<disk>/holders directory (empty when it has none or is absent).
[[nodiscard]] std::vector<std::string> disk_holders(const std::string &holders_dir);

// Checks /dev/ublkbN (path) and its sysfs holders directory. Never does I/O on the disk.
[[nodiscard]] DiskUse check_disk_use(const std::string &path, const std::string &holders_dir);

// --keep always leaves the device; --force-remove always removes it; otherwise a disk that
// is held, or whose state cannot be told, is left (removing it would fail the filesystem's
// I/O and lose its dirty data) and a free one is removed.
[[nodiscard]] bool should_remove(bool keep, bool force_remove, Held held);

// Where to look for what holds a disk open.
struct DiskLookup {
	std::string holders_dir;         // /sys/block/ublkbN/holders
	std::string majmin;              // the disk's "major:minor" ("" when unknown)
	std::string mountinfo;           // the text of /proc/self/mountinfo
	std::vector<std::string> paths;  // the disk's node(s), as other processes' fds link to them
};

// The lookup for the disk at bdev (/dev/ublkbN) on this system.
[[nodiscard]] DiskLookup disk_lookup(const std::string &bdev);

// What holds the disk, first found of: "held by dm-0" (sysfs holders), "mounted at /mnt/x"
// (the mount table), "open by pid N (comm)" (another process's fd; this one's are not
// counted). "" when none is found (the disk may still be open in ways /proc does not show).
[[nodiscard]] std::string disk_holder(const DiskLookup &l);

// The one-line refusal of a stop without --force of bdev, which holder holds.
[[nodiscard]] std::string stop_refusal(const std::string &bdev, const std::string &holder);

}  // namespace kvfdp::daemon
