#!/bin/sh
# security-unit.sh UNIT [MAX]: systemd-analyze security --offline=true on the kvfdpd unit; fails
# when its overall exposure is above MAX (default 5.0, docs/deploy.md "Sandbox"); exit 77
# without systemd-analyze.
unit=$1; max=${2:-5.0}
command -v systemd-analyze > /dev/null 2>&1 || { echo "SKIP: systemd: systemd-analyze is not installed"; exit 77; }
out=$(systemd-analyze security --offline=true "$unit" 2>&1)
echo "$out" | grep -E '✗|Overall'
score=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || { echo "FAIL: systemd-analyze security printed no overall exposure level"; echo "$out"; exit 1; }
if awk -v s="$score" -v m="$max" 'BEGIN { exit !(s > m) }'; then
	echo "FAIL: $unit scores $score, above $max: a directive was dropped or a capability added (docs/deploy.md, Sandbox)"
	exit 1
fi
echo "ok: $unit scores $score (at most $max)"
