#!/bin/sh
# harness_fail: a scenario that fails on purpose; the harness test vm_harness_detects_failure expects run to exit 1.
# vm-args: --timeout 120
. /lib/kvfdp/vm-lib.sh

step "a passing check and a deliberately failing one"
check "true succeeds" true
expect_eq "KVFDP_DELIBERATE_FAILURE marker" "one" "two"
finish
