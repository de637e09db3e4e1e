#!/bin/sh
# verify-unit.sh UNIT KVFDPD DIR: systemd-analyze verify of the kvfdpd unit with ExecStart
# pointed at KVFDPD, the settings docs/deploy.md relies on, and (with systemd-sysusers) the
# kvfdp.sysusers snippet next to it; exit 77 without systemd-analyze.
unit=$1; bin=$2; dir=$3
command -v systemd-analyze > /dev/null 2>&1 || { echo "SKIP: systemd: systemd-analyze is not installed"; exit 77; }
mkdir -p "$dir" || exit 1
sed "s#/usr/local/bin/kvfdpd#$bin#" "$unit" > "$dir/kvfdpd.service" || exit 1
out=$(systemd-analyze verify "$dir/kvfdpd.service" 2>&1)
rc=$?
[ -n "$out" ] && echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: systemd-analyze verify exited $rc"; exit 1; }
# Warnings about this unit fail the test too (other units' warnings on the host do not).
echo "$out" | grep -q "kvfdpd.service:" && { echo "FAIL: warnings about kvfdpd.service"; exit 1; }
for want in '^Type=notify$' '^ExecReload=/bin/kill -HUP \$MAINPID$' '^RuntimeDirectory=kvfdp$' \
	'^Restart=on-abnormal$' '^RestartForceExitStatus=3$' '^RestartPreventExitStatus=1 2$' '--attach' \
	'modprobe -q ublk_drv' 'in /etc/default/kvfdpd' '^CapabilityBoundingSet=CAP_' '^ProtectSystem=strict$' \
	'^StateDirectory=kvfdp$' '^DevicePolicy=closed$' '^NoNewPrivileges=yes$'; do
	grep -q -e "$want" "$unit" || { echo "FAIL: $unit lacks $want"; exit 1; }
done
sysusers=$(dirname "$unit")/kvfdp.sysusers
grep -q '^g kvfdp ' "$sysusers" || { echo "FAIL: $sysusers does not define the kvfdp group"; exit 1; }
grep -q '^g kvfdp-admin ' "$sysusers" || { echo "FAIL: $sysusers does not define the kvfdp-admin group"; exit 1; }
if command -v systemd-sysusers > /dev/null 2>&1; then
	systemd-sysusers --dry-run "$sysusers" > /dev/null || { echo "FAIL: systemd-sysusers refuses $sysusers"; exit 1; }
fi
echo "ok: $unit verifies"
