// Device-number helpers: stat a path and convert to the kernel's dev_t encoding.
#include "bpf/user/devnum.hpp"

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace kvfdp::bpf {

Result<uint32_t> path_fs_dev(const std::string &path)
{
	struct stat st {};
	if (::stat(path.c_str(), &st) != 0)
		return errno_error(errno, "stat " + path);
	return kernel_dev(st.st_dev);
}

Result<uint32_t> disk_dev(const std::string &path)
{
	struct stat st {};
	if (::stat(path.c_str(), &st) != 0)
		return errno_error(errno, "stat " + path);
	if (!S_ISBLK(st.st_mode))
		return guidance_error(
			std::errc::invalid_argument,
			path + " is not a block device; give a disk such as /dev/nvme0n1");
	std::string sys = "/sys/dev/block/" + std::to_string(::major(st.st_rdev)) + ":" +
			  std::to_string(::minor(st.st_rdev)) + "/partition";
	if (::access(sys.c_str(), F_OK) == 0)
		return guidance_error(std::errc::invalid_argument,
				      path + " is a partition; give its whole disk (requests are "
					     "issued to the disk)");
	return kernel_dev(st.st_rdev);
}

}  // namespace kvfdp::bpf
