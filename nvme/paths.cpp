// Namespace node names (paths.hpp).
#include "nvme/paths.hpp"

namespace kvfdp::nvme {

std::string base_name(const std::string &path)
{
	const size_t slash = path.rfind('/');
	return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ng_block_name(const std::string &name)
{
	return name.rfind("ng", 0) == 0 ? "nvme" + name.substr(2) : "";
}

}  // namespace kvfdp::nvme
