// Mounting tracefs for host BPF tests that attach syscall tracepoints.
#pragma once

#include <functional>
#include <string>

namespace kvfdp::test {

// The up-front capability probe (tests/support/skip.hpp, capability "tracefs"): mounts
// tracefs at /sys/kernel/tracing when it is not, and says why when it cannot be or the
// kernel has no syscall tracepoints.
std::function<std::string()> probe_tracefs();

}  // namespace kvfdp::test
