// Kernel feature probe from /proc and /sys.
#include "cli/kernel_probe.hpp"

#include <filesystem>
#include <fstream>

namespace kvfdp::cli {

namespace {

namespace fs = std::filesystem;

std::string read_line(const fs::path &p)
{
	std::ifstream in(p);
	std::string s;
	if (in)
		std::getline(in, s);
	return s;
}

bool path_exists(const fs::path &p)
{
	std::error_code ec;
	return fs::exists(p, ec);
}

bool module_file_present(const fs::path &dir)
{
	std::error_code ec;
	if (!fs::is_directory(dir, ec))
		return false;
	for (auto it = fs::recursive_directory_iterator(
		     dir, fs::directory_options::skip_permission_denied, ec);
	     !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
		auto name = it->path().filename().string();
		if (name.rfind("ublk_drv.ko", 0) == 0)
			return true;
	}
	return false;
}

}  // namespace

KernelFeatures probe_kernel(const std::string &root_str)
{
	fs::path root = root_str.empty() ? fs::path("/") : fs::path(root_str);
	KernelFeatures k;
	k.release = read_line(root / "proc/sys/kernel/osrelease");
	if (k.release.empty())
		k.release = "unknown";
	if (path_exists(root / "sys/module/ublk_drv") || path_exists(root / "dev/ublk-control"))
		k.ublk = "loaded";
	else if (module_file_present(root / "lib/modules" / k.release / "kernel/drivers/block"))
		k.ublk = "available";
	else
		k.ublk = "missing";
	k.btf = path_exists(root / "sys/kernel/btf/vmlinux");
	fs::path lsm = root / "sys/kernel/security/lsm";
	if (path_exists(lsm)) {
		std::string list = "," + read_line(lsm) + ",";
		k.bpf_lsm = list.find(",bpf,") != std::string::npos ? "active" : "inactive";
	} else {
		k.bpf_lsm = "unknown";
	}
	std::string iou = read_line(root / "proc/sys/kernel/io_uring_disabled");
	k.io_uring = iou == "2" ? "disabled" : iou == "1" ? "restricted" : "enabled";
	return k;
}

nlohmann::json to_json(const KernelFeatures &k)
{
	return {{"release", k.release},
		{"ublk_drv", k.ublk},
		{"btf", k.btf},
		{"bpf_lsm", k.bpf_lsm},
		{"io_uring", k.io_uring}};
}

}  // namespace kvfdp::cli
