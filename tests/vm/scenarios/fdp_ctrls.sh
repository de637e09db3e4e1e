#!/bin/sh
# fdp_ctrls: tests/vm/run --fdp-ctrls N: N FDP controllers in order (nvme0..nvme{N-1}, each its own subsystem with FDP enabled, the configured handles and its own disk), the plain controller after them.
# vm-args: --fdp-ctrls 4 --plain-ns 64M --lba 4096 --nruh 8 --runs 1M --nsze 256M --timeout 180
. /lib/kvfdp/vm-lib.sh
N=$KVFDP_FDP_CTRLS
expect_eq "KVFDP_FDP_CTRLS from --fdp-ctrls" "$N" 4

i=0
while [ $i -lt "$N" ]; do
	step "FDP controller $i"
	want=kvfdp-fdp; [ $i = 0 ] || want=kvfdp-fdp$i
	check "/dev/ng${i}n1 is a character device" test -c /dev/ng${i}n1
	check "/dev/nvme${i}n1 is a block device" test -b /dev/nvme${i}n1
	expect_eq "nvme$i serial" "$(tr -d ' ' < /sys/class/nvme/nvme$i/serial)" "$want"
	expect_eq "nvme$i subsystem NQN" "$(tr -d ' ' < /sys/class/nvme/nvme$i/subsysnqn)" "$(echo $want | sed 's/^/nqn.2019-08.org.qemu:/')"
	expect_eq "nvme${i}n1 size in bytes" "$(($(cat /sys/block/nvme${i}n1/size) * 512))" "$(size_bytes "$KVFDP_NSZE")"
	nvme fdp configs /dev/nvme$i -e 1 -o json > /tmp/configs$i.json
	expect_eq "nvme$i: handles (nruh)" "$(json_num nruh /tmp/configs$i.json)" "$KVFDP_NRUH"
	expect_eq "nvme$i: configuration valid (fdpa bit 7)" "$(( $(json_num fdpa /tmp/configs$i.json) >> 7 & 1 ))" 1
	nvme fdp status /dev/ng${i}n1 -o json > /tmp/status$i.json
	expect_eq "ng${i}n1: RUH status descriptors" "$(json_num nruhsd /tmp/status$i.json)" "$((KVFDP_NRUH * KVFDP_NRG))"
	fval=$(nvme get-feature /dev/nvme$i -f 0x1d -c 1 2>&1 | sed -n 's/.*[Vv]alue: *\(0x[0-9a-fA-F]*\).*/\1/p' | head -n 1)
	expect_eq "nvme$i: FDP enabled (Get Features 0x1D bit 0)" "$(( ${fval:-0} & 1 ))" 1
	# a marker per namespace: each controller has its own disk
	printf 'kvfdp-ns-%d' $i | dd of=/dev/nvme${i}n1 bs=4096 conv=sync,fsync 2>/dev/null
	i=$((i + 1))
done

step "each namespace kept its own marker (read past the page cache)"
sync; echo 3 > /proc/sys/vm/drop_caches
i=0
while [ $i -lt "$N" ]; do
	expect_eq "nvme${i}n1 marker" "$(dd if=/dev/nvme${i}n1 bs=4096 count=1 2>/dev/null | tr -d '\0')" "kvfdp-ns-$i"
	i=$((i + 1))
done

step "the plain controller comes after the FDP ones"
expect_eq "KVFDP_PLAIN" "$KVFDP_PLAIN" 1
check "/dev/ng${N}n1 is a character device" test -c /dev/ng${N}n1
expect_eq "nvme$N is the plain controller" "$(tr -d ' ' < /sys/class/nvme/nvme$N/serial)" kvfdp-plain
fval=$(nvme get-feature /dev/nvme$N -f 0x1d -c 1 2>&1 | sed -n 's/.*[Vv]alue: *\(0x[0-9a-fA-F]*\).*/\1/p' | head -n 1)
expect_eq "nvme$N: FDP not enabled (Get Features 0x1D bit 0, or refused)" "$(( ${fval:-0} & 1 ))" 0
nvme list
finish
