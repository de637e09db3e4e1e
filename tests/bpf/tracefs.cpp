// tracefs mounting for host BPF tests.
#include "tests/bpf/tracefs.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/skip.hpp"

namespace kvfdp::test {

void require_tracefs()
{
	if (::access("/sys/kernel/tracing/events/syscalls", F_OK) == 0)
		return;
	if (::mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0 && errno != EBUSY)
		skip((std::string("cannot mount tracefs at /sys/kernel/tracing: ") +
		      std::strerror(errno)).c_str());
	if (::access("/sys/kernel/tracing/events/syscalls", F_OK) != 0)
		skip("this kernel has no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)");
}

} // namespace kvfdp::test
