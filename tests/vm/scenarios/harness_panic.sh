#!/bin/sh
# harness_panic: crashes the guest kernel on purpose; vm_harness_detects_panic expects run to report the panic.
# vm-args: --timeout 120
echo "KVFDP_DELIBERATE_PANIC: sysrq c"
echo 1 > /proc/sys/kernel/sysrq
echo c > /proc/sysrq-trigger
echo "still alive after sysrq c"
