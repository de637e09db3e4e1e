// UniqueFd and open_fd.
#include "common/unique_fd.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace kvfdp {

void UniqueFd::reset(int fd) noexcept
{
	if (fd_ >= 0)
		::close(fd_);
	fd_ = fd;
}

Result<UniqueFd> open_fd(const std::string &path, int flags, unsigned mode)
{
	int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
	if (fd < 0)
		return errno_error(errno, "open " + path);
	return UniqueFd(fd);
}

}  // namespace kvfdp
