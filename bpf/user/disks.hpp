// The gendisks a disk's requests are issued on, found in sysfs: the disk itself, or, for an
// NVMe native-multipath head (bio-based, no queues), its hidden path disks nvmeXcYnZ; a
// disk's partitions; and the blk-mq geometry (queues x tags) of those disks, for sizing the
// tag-slot array.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvfdp::bpf {

// One gendisk that can carry a watched disk's requests.
struct RequestDisk {
	std::string name;  // sysfs name: "nvme0n1", "nvme0c0n1", "loop0"
	// kernel dev_t (major << 20 | minor); 0 when sysfs shows none (hidden disks have no dev
	// attribute since 5.15: match by name)
	uint32_t devt = 0;
	bool hidden = false;  // /sys/block/NAME/hidden is 1 (no /dev node)
	std::string via;      // how it was found: "itself", "nvme-subsystem" or "multipath"
};

// The disk with kernel dev_t devt first ("itself", also when it is a bio-based head), then
// every other gendisk its requests can be issued on:
//  - NVMe multipath: the disks under each controller of the head's nvme-subsystem whose
//    nsid equals the head's (<sys>/block/H/device is the subsystem; it links its
//    controllers; a controller's directory holds its namespace disks);
//  - plus the links in <sys>/block/H/multipath/ where the kernel has that group.
// Stacked devices (dm, md) are not followed: their members also carry other I/O.
// Empty when devt is not a disk in sysfs. sys_root is "/sys" except in tests.
[[nodiscard]] std::vector<RequestDisk> request_disks(uint32_t devt,
						     const std::string &sys_root = "/sys");

// The kernel dev_ts of the partitions of disk devt (<sys>/dev/block/MAJ:MIN/*/partition);
// empty when it has none or is not in sysfs.
[[nodiscard]] std::vector<uint32_t> partition_devs(uint32_t devt,
						   const std::string &sys_root = "/sys");

// Hardware queues and the most tags per queue over the blk-mq disks among disks
// (<sys>/block/NAME/mq/*/nr_tags); {1, 1} when none has queues.
struct MqGeometry {
	uint32_t queues = 1;
	uint32_t depth = 1;
};
[[nodiscard]] MqGeometry mq_geometry(const std::vector<RequestDisk> &disks,
				     const std::string &sys_root = "/sys");

// "nvme0n1 -> nvme0c0n1 (hidden, by name, nvme-subsystem)" style one-liner for logs.
[[nodiscard]] std::string describe(const std::vector<RequestDisk> &disks);

}  // namespace kvfdp::bpf
