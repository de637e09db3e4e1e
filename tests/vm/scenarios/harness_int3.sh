#!/bin/sh
# harness_int3: passes every check but prints an "Oops: int3" line to the console (via /dev/kmsg at
# KERN_CRIT), as the TCG int3 trap does (docs/vm.md); the harness test vm_harness_repeats_int3
# expects run to repeat it once under TCG and then fail on the second one.
# vm-args: --timeout 120
. /lib/kvfdp/vm-lib.sh

step "a passing check, then an int3 Oops line on the console"
check "true succeeds" true
# The trap's line can land behind the scenario's own unfinished console line, as it did in CI
# (`+ true[    5.61] Oops: int3: ...`); a partial line first makes that the usual case here.
printf 'scenario output without a newline: '
echo "<2>Oops: int3: KVFDP_DELIBERATE_INT3" > /dev/kmsg
echo
finish
