#!/bin/sh
# systemd_requires_probe (a probe, not in the suite): why docs/deploy.md's mount unit says Wants=kvfdpd.service and not Requires=. With Requires=, a kill -9 of kvfdpd makes systemd restart the mount with it: the unmount waits on the disk's held I/O, and the kvfdpd restart waits for the unmount. Asserts that neither has finished 60 s after the kill (vm_systemd_deb shows the Wants= unit riding through 10 kills).
# vm-args: --systemd --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 300
. /lib/kvfdp/vm-lib.sh
[ "${KVFDP_SYSTEMD:-0}" = 1 ] || die "runs under systemd: tests/vm/run systemd_requires_probe --systemd"
need_ublk
export DEBIAN_FRONTEND=noninteractive
DEB=$(ls /opt/kvfdp/debs/kvfdp_*.deb)
check "apt-get update" apt-get -q update
check "apt-get install ./kvfdp_*.deb" sh -c "cd /opt/kvfdp/debs && apt-get install -y -q ./$(basename "$DEB") > /dev/null 2>&1"
sed -i 's|^KVFDPD_DEVICE=.*|KVFDPD_DEVICE=/dev/ng0n1|' /etc/default/kvfdpd
check "systemctl enable --now kvfdpd" systemctl enable --now kvfdpd
check "mkfs.xfs" mkfs.xfs -q -f /dev/ublkb0
printf '[Unit]\nRequires=kvfdpd.service\nAfter=kvfdpd.service\n[Mount]\nWhat=/dev/ublkb0\nWhere=/mnt/kv\nType=xfs\nOptions=discard\n' > /etc/systemd/system/mnt-kv.mount
systemctl daemon-reload
check "the Requires= mount unit starts" systemctl start mnt-kv.mount
check "dirty data in the page cache" dd if=/dev/urandom of=/mnt/kv/dirty bs=1M count=16
pid=$(systemctl show -p MainPID --value kvfdpd)
kill -9 "$pid"
state() { echo "kvfdpd $(systemctl show -p ActiveState --value kvfdpd)/$(systemctl show -p SubState --value kvfdpd), mnt-kv.mount $(systemctl show -p ActiveState --value mnt-kv.mount)/$(systemctl show -p SubState --value mnt-kv.mount)"; }
# 60 s of wall time (date, not a count of polls), below the kernel's 120 s hung-task report.
back=0 end=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt $end ]; do
	[ "$(systemctl show -p ActiveState --value kvfdpd)" = active ] && { back=1; break; }
	sleep 1
done
if [ $back = 1 ]; then
	echo "kvfdpd came back: $(state)"
	expect_eq "kvfdpd is still waiting 60 s after the kill" back waiting
else
	echo "60 s after the kill: $(state); jobs: $(systemctl list-jobs --no-legend | tr '\n' ';')"
	expect_eq "the mount unit is stuck unmounting" "$(systemctl show -p SubState --value mnt-kv.mount)" unmounting
	check "umount waits in D state" sh -c "ps -eo stat,cmd | grep -q '^D.*umount /mnt/kv'"
fi
finish
