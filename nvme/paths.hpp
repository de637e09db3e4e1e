// Names of an NVMe namespace's device nodes, from their paths. Pure: no sysfs, no I/O.
#pragma once

#include <string>

namespace kvfdp::nvme {

// The last component of path ("/dev/ng0n1" -> "ng0n1"); a path without '/' is its own.
[[nodiscard]] std::string base_name(const std::string &path);

// The block device name of the namespace whose generic char device is named name:
// "ng0n1" -> "nvme0n1" (the same namespace, /sys/block/nvme0n1). "" for any other name.
[[nodiscard]] std::string ng_block_name(const std::string &name);

}  // namespace kvfdp::nvme
