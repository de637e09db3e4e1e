// Emulated-controller detection from sysfs.
#include "nvme/emulated.hpp"

#include <fstream>

namespace kvfdp::nvme {

bool controller_is_emulated(const std::string &device_path, const std::string &root)
{
	auto slash = device_path.rfind('/');
	std::string name = slash == std::string::npos ? device_path : device_path.substr(slash + 1);
	if (name.rfind("ng", 0) != 0 && name.rfind("nvme", 0) != 0)
		return false;
	std::string base = root == "/" ? "" : root;
	for (const char *cls : {"/sys/class/nvme-generic/", "/sys/class/block/"}) {
		std::ifstream in(base + cls + name + "/device/model");
		std::string model;
		if (in && std::getline(in, model))
			return model.find("QEMU") != std::string::npos;
	}
	return false;
}

}  // namespace kvfdp::nvme
