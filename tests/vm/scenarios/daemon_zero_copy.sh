#!/bin/sh
# daemon_zero_copy: kvfdpd's three data paths on one kernel, each with data checked through the filesystem and the raw disk: zero copy by UBLK_F_AUTO_BUF_REG (the default where the driver has it), zero copy by per-request registration (--zero-copy-register, UBLK_F_SUPPORT_ZERO_COPY) and copy (--no-zero-copy); status names the mode and counts the bytes copied; `kvfdp stop` is refused while the disk is mounted and removes it once it is not.
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 512M --timeout 300
. /lib/kvfdp/vm-lib.sh
need_ublk
need kvfdpd kvfdp kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock

# run_mode LABEL EXPECTED-MODE [KVFDPD ARGS...]
run_mode() {
	label=$1 want=$2
	shift 2
	step "$label: kvfdpd $*"
	rm -f /tmp/kvfdpd.ready
	kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready "$@" > "$OUT/kvfdpd-$label.log" 2>&1 &
	KPID=$!
	wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd-$label.log"; die "$label: kvfdpd did not become ready"; }
	UB=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
	$T snap $SOCK status "$OUT/status-$label-0.json"
	expect_eq "$label: data path" "$($T get "$OUT/status-$label-0.json" data_path mode)" "$want"
	# The raw disk: a pattern written with O_DIRECT in 1 MiB and 4 KiB requests reads back
	# the same through the page cache and O_DIRECT (reads and writes both cross the data path).
	dd if=/dev/urandom of=/tmp/pat bs=1M count=8 2>/dev/null
	check "$label: O_DIRECT 1 MiB writes" dd if=/tmp/pat of="$UB" bs=1M seek=100 oflag=direct conv=notrunc
	check "$label: O_DIRECT 4 KiB writes" dd if=/tmp/pat of="$UB" bs=4k count=512 seek=51200 oflag=direct conv=notrunc
	echo 3 > /proc/sys/vm/drop_caches
	check "$label: O_DIRECT read back (1 MiB)" sh -c "dd if=$UB bs=1M skip=100 count=8 iflag=direct 2>/dev/null | cmp - /tmp/pat"
	check "$label: buffered read back (4 KiB area)" sh -c "dd if=$UB bs=4k skip=51200 count=512 2>/dev/null | cmp -n 2097152 - /tmp/pat"
	check "$label: the namespace holds the same bytes" sh -c "dd if=/dev/nvme0n1 bs=1M skip=100 count=8 iflag=direct 2>/dev/null | cmp - /tmp/pat"
	# A filesystem: hinted buffered and O_DIRECT files, remounted, checksummed.
	check "$label: mkfs.xfs" mkfs.xfs -q -f "$UB"
	mkdir -p /mnt/kv
	check "$label: mount" mount "$UB" /mnt/kv || die "$label: cannot mount XFS on $UB"
	check "$label: buffered file" $T write /mnt/kv/b 2 3076 --seed 7
	check "$label: O_DIRECT file" $T write /mnt/kv/d 4 2052 --direct --seed 8
	(cd /mnt/kv && md5sum b d > /tmp/sums)
	check "$label: umount" umount /mnt/kv
	echo 3 > /proc/sys/vm/drop_caches
	check "$label: remount" mount "$UB" /mnt/kv || die "$label: cannot remount XFS on $UB"
	check "$label: checksums after remount" sh -c 'cd /mnt/kv && md5sum -c /tmp/sums'
	# A stop of the mounted disk is refused, in one line naming the mount; kvfdpd serves on.
	check "$label: kvfdp stop of the mounted disk is refused" sh -c "! kvfdp --socket $SOCK stop 2> /tmp/stop.err"
	cat /tmp/stop.err
	check "$label: the refusal names the mount" grep -q "is mounted at /mnt/kv" /tmp/stop.err
	check "$label: still serving after the refusal" sh -c 'cd /mnt/kv && md5sum -c /tmp/sums'
	umount /mnt/kv
	check "$label: xfs_repair -n is clean" xfs_repair -n "$UB"
	$T snap $SOCK status "$OUT/status-$label.json"
	expect_eq "$label: no I/O errors" "$($T get "$OUT/status-$label.json" io errors)" 0
	copied=$($T get "$OUT/status-$label.json" io copied_bytes)
	moved=$(( $($T get "$OUT/status-$label.json" io read_bytes) + $($T get "$OUT/status-$label.json" io write_bytes) ))
	if [ "$want" = copy ]; then
		expect_eq "$label: bytes copied = bytes read + written" "$copied" "$moved"
	else
		expect_eq "$label: bytes copied" "$copied" 0
	fi
	# 10 MiB written and 10 MiB read on the raw disk, 5 MiB of files, mkfs and mounts
	expect_ge "$label: bytes moved" "$moved" $((25 << 20))
	# Unmounted, kvfdp stop goes through (TRY_STOP_DEV where the driver has SAFE_STOP_DEV).
	check "$label: kvfdp stop of the free disk" kvfdp --socket $SOCK stop
	check "$label: kvfdpd exits 0" wait $KPID
	check "$label: the disk is removed" test ! -b "$UB"
}

modprobe xfs 2>/dev/null
step "what this driver offers"
rm -f /tmp/kvfdpd.ready
kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd-probe.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd-probe.log"; die "kvfdpd did not become ready"; }
$T snap $SOCK status "$OUT/status-probe.json"
DEFAULT=$($T get "$OUT/status-probe.json" data_path mode)
echo "default data path: $DEFAULT ($($T get "$OUT/status-probe.json" data_path note))"
echo "ublk features in use: $(grep -o '"ublk_features":\[[^]]*\]' "$OUT/status-probe.json") $(grep -o '"ublk_note":"[^"]*"' "$OUT/status-probe.json")"
kill -TERM $KPID
wait $KPID
[ "$DEFAULT" = zero-copy ] || skip "kernel $(uname -r): kvfdpd's default data path is $DEFAULT, not zero copy (UBLK_F_AUTO_BUF_REG needs 6.16+)"

run_mode auto zero-copy
run_mode register zero-copy-register --zero-copy-register
run_mode copy copy --no-zero-copy
finish
