// Device discovery from /dev/ngXnY: sysfs names, Identify, FDP feature and configuration,
// RUH Status. Each failure is one line that says what to do next.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "common/unique_fd.hpp"
#include "nvme/device.hpp"
#include "nvme/logs.hpp"
#include "nvme/spec.hpp"

namespace kvfdp::nvme {

class UringPassthru;

// Names that belong to one NVMe generic char device.
struct NgNames {
	std::string ng_path;     // /dev/ng0n1
	std::string ng_name;     // ng0n1
	std::string block_name;  // nvme0n1 (for /sys/block/<name>/queue)
	std::string ctrl_name;   // nvme0 (the controller; admin commands go to /dev/nvme0)
};

// Parses "ng<X>n<Y>" out of a path. Pure. Errors name the device to use instead: a block
// device /dev/nvme0n1 gets "use /dev/ng0n1", a controller /dev/nvme0 gets "use /dev/ng0n1".
[[nodiscard]] Result<NgNames> parse_ng_path(const std::string &path);

// Resolves the controller of an ng device through sysfs (/sys/class/nvme-generic/<ng>/device
// is the controller, or with native multipath the subsystem, whose first controller is
// used). sysfs_root is "/sys" except in tests.
[[nodiscard]] Result<std::string> find_controller(const std::string &ng_name,
						  const std::string &sysfs_root = "/sys");

// Synchronous admin command through NVME_IOCTL_ADMIN_CMD (works on /dev/nvmeX and
// /dev/ngXnY). Returns 0, an NVMe status or -errno; dw0 gets completion dword 0.
int admin_ioctl(int fd, const UringCmd &cmd, uint32_t *dw0 = nullptr);
// Synchronous I/O command through NVME_IOCTL_IO_CMD on an ng fd. Same result convention.
int io_ioctl(int fd, const UringCmd &cmd, uint32_t *dw0 = nullptr);

// Reads RUH Status the way QEMU accepts it: the 16-byte header first, then exactly
// 16 + 32 nruhsd bytes (a longer buffer gets 0x400F on the 6.x SGL path).
[[nodiscard]] Result<RuhStatus> read_ruh_status(int ng_fd, uint32_t nsid);

// Reads log lid (LSI = lsi) from the controller through an admin ioctl, sized to the log's
// own length (0x20 by its header's size, 0x21 by nruh, 0x22 64 bytes, 0x23 4096 bytes).
[[nodiscard]] Result<std::vector<uint8_t>> read_fdp_log(int admin_fd, uint8_t lid, uint16_t lsi,
							uint8_t lsp = 0);

// The limits that bound the data of one passthrough command (NVMe I/O through /dev/ngXnY
// is never split by the kernel: a command over any of them fails with -EINVAL).
// 0 means unknown / not limited.
struct TransferLimits {
	uint64_t mdts_bytes = 0;        // Identify Controller MDTS, in bytes (CAP.MPSMIN = 4 KiB)
	uint64_t max_hw_bytes = 0;      // /sys/block/<disk>/queue/max_hw_sectors_kb * 1024
	uint32_t max_segments = 0;      // queue/max_segments: physical runs per command
	uint64_t max_segment_size = 0;  // queue/max_segment_size
	uint32_t page_size = 4096;      // the host's page size
};

// Bytes one passthrough command may carry whatever the buffer's alignment and physical
// layout: min(MDTS, max_hw_sectors_kb, (max_segments - 1) pages), in whole blocks of
// lba_size, at most kMaxNlb blocks (the NLB field), and at least one block. The segment term
// is there because a buffer of n pages that starts mid-page spans n + 1 pages, and pages
// that are not physically contiguous are one segment each: with QEMU's MDTS 512 KiB and
// max_segments 128 (Linux 6.12; 127 on 6.1) a 512 KiB command from an unaligned malloc
// buffer fails with -EINVAL whenever its 129 pages happen to be scattered. Nothing known:
// 128 KiB. Pure.
[[nodiscard]] uint32_t passthru_max_transfer(const TransferLimits &lim, uint32_t lba_size);

// Reads the queue limits of /sys/block/<block_name>/queue (sysfs_root "/sys" except in
// tests) into lim, leaving the fields it cannot read at 0.
void read_queue_limits(const std::string &block_name, TransferLimits &lim,
		       const std::string &sysfs_root = "/sys");

// Everything discovery learnt. handles is empty when FDP is not usable.
struct Discovery {
	NgNames names;
	DeviceInfo info;
	IdCtrl id_ctrl;
	IdNs id_ns;
	FdpConfig config;             // the active configuration, when FDP is enabled
	std::vector<Handle> handles;  // RUH Status order
	std::vector<uint16_t> pids;   // pids[i] == handles[i].pid
	UniqueFd ng_fd;               // open O_RDWR
	UniqueFd admin_fd;            // /dev/nvmeX, or a dup of ng_fd when that cannot be opened
};

// Opens ng_path and reads everything. With require_fdp, a drive without usable FDP (no
// support, disabled, no handles) is an error that says what to do.
[[nodiscard]] Result<Discovery> discover(const std::string &ng_path, bool require_fdp = true);

// Whether FDP can be used on a device discovery described: ok, or the one-line error that
// says what to do (no support: CTRATT bit 19; disabled: the set-feature command; no
// handles). admin_name is the controller path shown in the hints. Pure.
[[nodiscard]] Result<void> fdp_usable(const DeviceInfo &info, size_t nhandles,
				      const std::string &admin_name);

// The namespace's identity from Identify Controller (id_ctrl) and Identify Namespace
// (id_ns) of nsid: "nguid-<32 hex digits>" (NGUID, NVMe 2.x Identify Namespace bytes
// 119:104), else "eui64-<16 hex digits>" (EUI64, bytes 127:120) when the NGUID is zero, else
// "sn-<serial>-ns<nsid>" (Identify Controller SN, bytes 23:04, ASCII padded with spaces;
// trimmed, any character but [A-Za-z0-9._-] as '_'), else "" (buffers too short). Pure.
[[nodiscard]] std::string namespace_identity(std::span<const uint8_t> id_ctrl,
					     std::span<const uint8_t> id_ns, uint32_t nsid);

// Joins RUH Status with the configuration's handle types into kvfdp Handles.
[[nodiscard]] std::vector<Handle> make_handles(const RuhStatus &rs, const FdpConfig &cfg);

}  // namespace kvfdp::nvme
