// Device numbers in the kernel's internal encoding (major << 20 | minor), which the BPF
// programs see in gendisk and super_block->s_dev, converted from userspace dev_t.
#pragma once

#include <cstdint>
#include <string>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include "common/result.hpp"

namespace kvfdp::bpf {

// The kernel's MKDEV(major, minor).
[[nodiscard]] constexpr uint32_t kernel_dev(uint32_t major, uint32_t minor)
{
	return (major << 20) | (minor & 0xfffff);
}

// A userspace dev_t (stat's st_dev / st_rdev) in kernel encoding.
[[nodiscard]] inline uint32_t kernel_dev(dev_t dev)
{
	return kernel_dev(::major(dev), ::minor(dev));
}

// The filesystem (s_dev) a path lives on, in kernel encoding.
[[nodiscard]] Result<uint32_t> path_fs_dev(const std::string &path);

// A whole block device node (not a partition) as a kernel dev_t; a clear error otherwise.
[[nodiscard]] Result<uint32_t> disk_dev(const std::string &path);

}  // namespace kvfdp::bpf
