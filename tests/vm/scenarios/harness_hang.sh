#!/bin/sh
# harness_hang: a scenario that never finishes; vm_harness_detects_timeout expects run to kill it and say TIMEOUT.
# vm-args: --timeout 20
echo "KVFDP_DELIBERATE_HANG: blocking on a fifo nobody writes"
mkfifo /tmp/never
read -r _ < /tmp/never
