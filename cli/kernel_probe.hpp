// What the running kernel offers kvfdp: version, ublk_drv, BTF, BPF LSM, io_uring.
// Read from /proc and /sys only (existence checks, never version comparisons).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kvfdp::cli {

struct KernelFeatures {
	std::string release;  // /proc/sys/kernel/osrelease
	// "loaded" (/sys/module/ublk_drv or /dev/ublk-control), "available" (a module file
	// under /lib/modules/RELEASE), or "missing".
	std::string ublk;
	bool btf = false;  // /sys/kernel/btf/vmlinux: the BPF tagger can load
	// "active" / "inactive" from /sys/kernel/security/lsm, "unknown" when unreadable.
	std::string bpf_lsm;
	// "enabled", "restricted" or "disabled" (/proc/sys/kernel/io_uring_disabled 0/1/2;
	// absent means enabled).
	std::string io_uring;
};

// Probes below root ("/" normally; tests pass a fake tree).
[[nodiscard]] KernelFeatures probe_kernel(const std::string &root = "/");
[[nodiscard]] nlohmann::json to_json(const KernelFeatures &k);

}  // namespace kvfdp::cli
