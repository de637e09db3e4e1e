#!/bin/sh
# harness_warn: passes every check but leaves a kernel WARNING splat line in the ring buffer (via
# /dev/kmsg); the harness test vm_harness_detects_warn expects run to fail on it (dmesg-check).
# vm-args: --timeout 120
. /lib/kvfdp/vm-lib.sh

step "a passing check, then a WARNING line in dmesg"
check "true succeeds" true
echo "WARNING: CPU: 0 PID: 1 at KVFDP_DELIBERATE_WARN harness_warn+0x0/0x0" > /dev/kmsg
finish
