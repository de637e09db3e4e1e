// Mounting tracefs for host BPF tests that attach syscall tracepoints.
#pragma once

namespace kvfdp::test {

// Ensures /sys/kernel/tracing is a mounted tracefs; skips the test (77) when it cannot be.
void require_tracefs();

} // namespace kvfdp::test
