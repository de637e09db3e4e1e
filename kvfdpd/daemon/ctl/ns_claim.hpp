// The exclusive claim of the namespace kvfdpd serves: one kvfdpd per namespace, and none on a
// namespace whose block device (/dev/nvmeXnY) is mounted or held. Taken before the ublk device
// is created and held for the daemon's life (a crash releases it). docs/deploy.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace kvfdp::daemon {

struct NsClaim {
	UniqueFd
		lock;  // the namespace's node (/dev/ngXnY), flock(LOCK_EX): one kvfdpd per namespace
	UniqueFd block;          // its block device, O_EXCL: nothing mounts or claims it meanwhile
	std::string block_path;  // "" when the namespace has no block device
};

// The block device of a namespace node: /dev/ngXnY -> /dev/nvmeXnY; a block device (the
// streams backend's /dev/nvmeXnY, or a link to one) is its own, by its real path. "" when
// there is none.
[[nodiscard]] std::string namespace_block_path(const std::string &node);

// The mount points (field 5 of /proc/self/mountinfo text) of the filesystems on any of devs
// ("maj:min").
[[nodiscard]] std::vector<std::string> mounts_of(std::string_view mountinfo,
						 const std::vector<std::string> &devs);

// Another process that has one of paths open (pid 0: none).
struct Opener {
	int pid = 0;
	std::string comm;
	std::string path;  // the one of paths it holds (a streams kvfdpd: /dev/nvmeXnY, not ngXnY)
	[[nodiscard]] std::string text() const
	{
		return "pid " + std::to_string(pid) + " (" + comm + ")";
	}
};
[[nodiscard]] Opener other_opener(const std::vector<std::string> &paths);

// Claims the namespace at node (the backend's device: /dev/ngXnY for passthru, /dev/nvmeXnY
// for streams; a stripe claims each member). The refusal is one line naming the
// other user: another kvfdpd ("pid N (kvfdpd) serves /dev/ng0n1 as /dev/ublkb0"), a mount
// ("mounted at /x"), a holder ("held by dm-0") or another opener. served_by(pid) names the
// ublk disk a pid serves ("" when none).
[[nodiscard]] Result<NsClaim> claim_namespace(const std::string &node,
					      const std::function<std::string(int)> &served_by);

}  // namespace kvfdp::daemon
