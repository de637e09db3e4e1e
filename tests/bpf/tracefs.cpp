// tracefs mounting for host BPF tests.
#include "tests/bpf/tracefs.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kvfdp::test {

std::function<std::string()> probe_tracefs()
{
	return []() -> std::string {
		if (::access("/sys/kernel/tracing/events/syscalls", F_OK) == 0)
			return "";
		if (::mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0 &&
		    errno != EBUSY)
			return std::string("cannot mount tracefs at /sys/kernel/tracing: ") +
			       std::strerror(errno);
		if (::access("/sys/kernel/tracing/events/syscalls", F_OK) != 0)
			return "this kernel has no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)";
		return "";
	};
}

}  // namespace kvfdp::test
