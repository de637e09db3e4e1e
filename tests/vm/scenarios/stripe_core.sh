#!/bin/sh
# stripe_core: kvfdpd striping one ublk disk across 2 QEMU FDP controllers through passthru (zero copy on 6.18): refusals, layout on the raw members, hinted files per handle per member, kill -9 + --attach, and a swapped member order refused.
# vm-args: --fdp-ctrls 2 --lba 4096 --nruh 8 --runs 16M --nsze 256M --timeout 420
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool
need_ublk
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock

# ruamw_of NG: one line per handle: its RUAMW (nvme fdp status, in RUH Status order)
ruamw_of() { nvme fdp status "$1" -o json | sed -n 's/.*"ruamw" *: *\([0-9][0-9]*\).*/\1/p'; }

step "refusals, one line each, exit 1"
kvfdpd --device /dev/ng0n1 --device /dev/ng0n1 --socket $SOCK > /tmp/r1.log 2>&1; rc=$?
cat /tmp/r1.log
expect_eq "same namespace twice: exit" "$rc" 1
check "same namespace twice: names member 1" grep -q "stripe member 1 (/dev/ng0n1) is the same namespace as member 0" /tmp/r1.log
kvfdpd --device /dev/ng0n1 --device /dev/nvme1n1 --socket $SOCK > /tmp/r2.log 2>&1; rc=$?
cat /tmp/r2.log
expect_eq "a block device as member: exit" "$rc" 1
check "a block device as member: names it" grep -q "stripe member 1 (/dev/nvme1n1)" /tmp/r2.log
mkfs.ext4 -q -F /dev/nvme1n1 && mkdir -p /mnt/m1 && mount /dev/nvme1n1 /mnt/m1
kvfdpd --device /dev/ng0n1 --device /dev/ng1n1 --socket $SOCK > /tmp/r3.log 2>&1; rc=$?
cat /tmp/r3.log
expect_eq "a mounted member: exit" "$rc" 1
check "a mounted member: names member 1 and the mount" grep -q "stripe member 1 (/dev/ng1n1).*mounted at /mnt/m1" /tmp/r3.log
umount /mnt/m1
dd if=/dev/zero of=/dev/nvme1n1 bs=1M count=4 oflag=direct 2>/dev/null

step "kvfdpd --device /dev/ng0n1 --device /dev/ng1n1 --dev-id 0 --attach"
for i in 0 1; do ruamw_of /dev/ng${i}n1 > /tmp/ruamw0_$i; done
start() {
	rm -f /tmp/kvfdpd.ready
	kvfdpd "$@" --dev-id 0 --attach --socket $SOCK --ready-file /tmp/kvfdpd.ready >> "$OUT/kvfdpd.log" 2>&1 &
	KPID=$!
	wait_until 60 sh -c "test -e /tmp/kvfdpd.ready || ! kill -0 $KPID"
	test -e /tmp/kvfdpd.ready
}
start --device /dev/ng0n1 --device /dev/ng1n1 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
cat "$OUT/kvfdpd.log"
if ublk_zero_copy; then
	check "zero copy where the driver offers it (each member's commands from the request's own registered pages)" grep -q "ready: .* zero-copy" "$OUT/kvfdpd.log"
fi
check "the log states the stripe" grep -q "striped across 2 members (/dev/ng0n1,/dev/ng1n1), stripe size 524288 bytes" "$OUT/kvfdpd.log"
expect_eq "capacity: 2 x 256 MiB" "$(($(cat /sys/block/ublkb0/size) * 512))" $((512 << 20))
expect_eq "chunk_sectors: the stripe unit" "$(cat /sys/block/ublkb0/queue/chunk_sectors)" 1024
expect_eq "optimal_io_size: a full row" "$(cat /sys/block/ublkb0/queue/optimal_io_size)" $((1 << 20))
expect_eq "minimum_io_size: the unit" "$(cat /sys/block/ublkb0/queue/minimum_io_size)" $((512 << 10))

step "layout: 4 MiB through /dev/ublkb0 lands unit by unit on the raw members"
dd if=/dev/urandom of=/tmp/src bs=1M count=4 2>/dev/null
check "write 4 MiB at 8 MiB" dd if=/tmp/src of=/dev/ublkb0 bs=1M seek=8 oflag=direct conv=fsync
u=0
while [ $u -lt 8 ]; do
	lu=$((16 + u))  # logical unit (512 KiB) of this piece
	dd if=/tmp/src of=/tmp/want bs=512K skip=$u count=1 2>/dev/null
	dd if=/dev/nvme$((lu % 2))n1 of=/tmp/got bs=512K skip=$((lu / 2)) count=1 iflag=direct 2>/dev/null
	check "unit $lu on member $((lu % 2)) at its unit $((lu / 2))" cmp -s /tmp/want /tmp/got
	u=$((u + 1))
done
check "read back through the stripe" sh -c 'dd if=/dev/ublkb0 bs=1M skip=8 count=4 iflag=direct 2>/dev/null | cmp -s - /tmp/src'
dd if=/tmp/src of=/tmp/want2 bs=256K skip=1 count=4 2>/dev/null
check "a read across unit ends (1 MiB at 8 MiB + 256 KiB)" sh -c 'dd if=/dev/ublkb0 bs=256K skip=33 count=4 iflag=direct 2>/dev/null | cmp -s - /tmp/want2'

step "ext4 with hinted files: each class's handle moved on both members, by exactly the class's bytes in all"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/ublkb0
mkdir -p /mnt/kv
check "ext4 mounts" mount /dev/ublkb0 /mnt/kv || die "cannot mount"
for i in 0 1; do ruamw_of /dev/ng${i}n1 > /tmp/ruamw1_$i; done
hinted_writes "ext4: " $SOCK /mnt/kv
for i in 0 1; do ruamw_of /dev/ng${i}n1 > /tmp/ruamw2_$i; cp /tmp/ruamw2_$i "$OUT/ruamw_member$i.txt"; done
# hints 2 3 4 5 -> short medium long extreme -> handles 1 2 3 4 (the built-in map)
for h in 1 2 3 4; do
	n=$((h + 1))
	d0=$(( $(sed -n ${n}p /tmp/ruamw1_0) - $(sed -n ${n}p /tmp/ruamw2_0) ))
	d1=$(( $(sed -n ${n}p /tmp/ruamw1_1) - $(sed -n ${n}p /tmp/ruamw2_1) ))
	echo "handle $h: member 0 $d0 LBAs, member 1 $d1 LBAs"
	expect_eq "handle $h: both members' LBAs add up to the class's bytes" $(( (d0 + d1) * 4096 )) $((HINT_SUM_KIB * 1024))
	check "handle $h: member 0 took a share" test "$d0" -gt 0
	check "handle $h: member 1 took a share" test "$d1" -gt 0
done
for h in 5 6 7; do
	n=$((h + 1))
	expect_eq "unused handle $h unchanged on member 0" "$(sed -n ${n}p /tmp/ruamw2_0)" "$(sed -n ${n}p /tmp/ruamw0_0)"
	expect_eq "unused handle $h unchanged on member 1" "$(sed -n ${n}p /tmp/ruamw2_1)" "$(sed -n ${n}p /tmp/ruamw0_1)"
done
check "ext4 remounts" mount /dev/ublkb0 /mnt/kv
check "checksums" sh -c 'cd /mnt/kv && md5sum -c /tmp/sums >/dev/null'
check "fstrim fans out" fstrim -v /mnt/kv
umount /mnt/kv

step "kill -9, a swapped member order is refused, the same order re-attaches"
dd if=/dev/urandom of=/tmp/src2 bs=1M count=2 2>/dev/null
check "write 2 MiB at 100 MiB" dd if=/tmp/src2 of=/dev/ublkb0 bs=1M seek=100 oflag=direct conv=fsync
kill -9 $KPID; wait $KPID 2>/dev/null
: > "$OUT/kvfdpd.log"
kvfdpd --device /dev/ng1n1 --device /dev/ng0n1 --dev-id 0 --attach --socket $SOCK > /tmp/r4.log 2>&1; rc=$?
cat /tmp/r4.log
expect_eq "swapped order: exit" "$rc" 1
check "swapped order: says the device was made on other members" grep -q "was created on a stripe of other members, member order or stripe size" /tmp/r4.log
kvfdpd --device /dev/ng0n1 --dev-id 0 --attach --socket $SOCK > /tmp/r5.log 2>&1; rc=$?
cat /tmp/r5.log
expect_eq "one member of the stripe: exit" "$rc" 1
start --device /dev/ng0n1 --device /dev/ng1n1 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not re-attach"; }
cat "$OUT/kvfdpd.log"
check "re-attached (recovered)" grep -q "recovered" "$OUT/kvfdpd.log"
check "data written before the kill" sh -c 'dd if=/dev/ublkb0 bs=1M skip=100 count=2 iflag=direct 2>/dev/null | cmp -s - /tmp/src2'
kill $KPID; wait $KPID
expect_eq "SIGTERM: kvfdpd exits 0" "$?" 0
check "the disk is gone" sh -c '! test -e /sys/block/ublkb0'

if write_streams nvme0n1; then
	step "write streams offered: a stripe of the streams backend (block devices, write streams; its default stripe follows its own transfer limit, so 512K is given): units on the raw members"
	rm -f /tmp/kvfdpd.ready
	kvfdpd --backend streams --device /dev/nvme0n1 --device /dev/nvme1n1 --stripe-size 512K --socket $SOCK --ready-file /tmp/kvfdpd.ready \
		> "$OUT/kvfdpd_streams.log" 2>&1 &
	KPID=$!
	wait_until 60 sh -c "test -e /tmp/kvfdpd.ready || ! kill -0 $KPID"
	cat "$OUT/kvfdpd_streams.log"
	if check "streams stripe ready" test -e /tmp/kvfdpd.ready; then
		dev=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
		check "streams: write 2 MiB at 1 MiB" dd if=/tmp/src of=$dev bs=1M seek=1 count=2 oflag=direct conv=fsync
		u=0
		while [ $u -lt 4 ]; do
			lu=$((2 + u))
			dd if=/tmp/src of=/tmp/want bs=512K skip=$u count=1 2>/dev/null
			dd if=/dev/nvme$((lu % 2))n1 of=/tmp/got bs=512K skip=$((lu / 2)) count=1 iflag=direct 2>/dev/null
			check "streams: unit $lu on member $((lu % 2))" cmp -s /tmp/want /tmp/got
			u=$((u + 1))
		done
		kill $KPID; wait $KPID
		expect_eq "streams: SIGTERM exit" "$?" 0
	fi
fi
finish
