// The steps of a start, timed (start_steps.hpp).
#include "kvfdpd/daemon/ctl/start_steps.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>

namespace kvfdp::daemon {

StartSteps::StartSteps()
{
	char buf[1024];
	const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	const ssize_t n = fd >= 0 ? ::read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		::close(fd);
	timespec boot{};
	const char *close_paren = n > 0 ? (buf[n] = 0, std::strrchr(buf, ')')) : nullptr;
	unsigned long long start_ticks = 0;
	if (close_paren && ::clock_gettime(CLOCK_BOOTTIME, &boot) == 0 &&
	    std::sscanf(
		    close_paren + 2,
		    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		    &start_ticks) == 1) {
		const long hz = ::sysconf(_SC_CLK_TCK);
		const double since = boot.tv_sec + boot.tv_nsec / 1e9 -
				     static_cast<double>(start_ticks) / (hz > 0 ? hz : 100);
		if (since >= 0)
			exec_ms_ = static_cast<long>(since * 1000);
	}
}

}  // namespace kvfdp::daemon
