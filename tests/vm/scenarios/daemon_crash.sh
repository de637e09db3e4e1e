#!/bin/sh
# daemon_crash: kill -9 kvfdpd in the middle of a writer, restart it (XFS: --recover ID; ext4: --dev-id 0 --attach, as the systemd unit restarts it): the writer finishes without an I/O error, checksums match, fsck is clean; on XFS and ext4. ext4 also: a plain SIGTERM (no --keep) while mounted and written to leaves the device for --attach (no I/O error, fsck clean); SIGTERM with nothing mounted removes it.
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 300
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock
KIB=24576   # 24 MiB per writer

start_kvfdpd() {  # $1: log name, then extra args
	log=$1; shift
	rm -f /tmp/kvfdpd.ready
	kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready "$@" >> "$OUT/$log" 2>&1 &
	KPID=$!
	wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/$log"; die "kvfdpd did not become ready ($*)"; }
}

modprobe xfs 2>/dev/null
step "expected file contents (tmpfs)"
$T write /tmp/expect_b 4 $KIB --seed 7 && $T write /tmp/expect_d 2 $KIB --seed 8 || die "tmpfs writer failed"
want_b=$(md5sum < /tmp/expect_b)
want_d=$(md5sum < /tmp/expect_d)
rm -f /tmp/expect_b /tmp/expect_d

for fs in xfs ext4; do
	step "$fs: kvfdpd, mkfs, mount"
	# ext4 runs the systemd unit's command line: the same one starts and re-attaches.
	if [ $fs = xfs ]; then start_args=""; else start_args="--dev-id 0 --attach --keep"; fi
	start_kvfdpd kvfdpd_$fs.log $start_args
	id=$(cut -d' ' -f2 /tmp/kvfdpd.ready)
	dev=/dev/ublkb$id
	if [ $fs = xfs ]; then mkfs.xfs -q -f $dev; else mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $dev; fi
	mkdir -p /mnt/kv
	check "$fs mounts" mount -o discard $dev /mnt/kv || { kill $KPID; wait $KPID; continue; }

	step "$fs: two writers (buffered LONG, O_DIRECT SHORT), kill -9 kvfdpd mid-way"
	$T write /mnt/kv/buffered 4 $KIB --seed 7 > /tmp/wb.log 2>&1 &
	WB=$!
	$T write /mnt/kv/direct 2 $KIB --seed 8 --direct --chunk 256 > /tmp/wd.log 2>&1 &
	WD=$!
	# Kill once the O_DIRECT writer is a quarter through: requests are in flight then.
	wait_until 120 sh -c "[ \$(stat -c %s /mnt/kv/direct 2>/dev/null || echo 0) -ge $((KIB * 1024 / 4)) ]" ||
		echo "note: the writer finished early"
	before=$($T ctl $SOCK '{"cmd":"status"}' | sed -n 's/.*"write_bytes":\([0-9]*\).*/\1/p')
	kill -9 $KPID
	wait $KPID 2>/dev/null
	echo "killed kvfdpd after $before bytes written"
	check "the device stays while its server is dead" test -b $dev

	if [ $fs = xfs ]; then restart_args="--recover $id"; else restart_args="--dev-id 0 --attach"; fi
	step "$fs: kvfdpd $restart_args"
	start_kvfdpd kvfdpd_${fs}_recover.log $restart_args
	cat "$OUT/kvfdpd_${fs}_recover.log"
	$T snap $SOCK status /tmp/rs.json
	expect_eq "$fs: recovered flag" "$($T get /tmp/rs.json recovery recovered)" true
	expect_eq "$fs: recovered device id" "$($T get /tmp/rs.json device ublk_id)" "$id"
	check "$fs: buffered writer finished without an I/O error" wait $WB
	check "$fs: O_DIRECT writer finished without an I/O error" wait $WD
	cat /tmp/wb.log /tmp/wd.log
	expect_eq "$fs: buffered file checksum" "$(md5sum < /mnt/kv/buffered)" "$want_b"
	expect_eq "$fs: O_DIRECT file checksum" "$(md5sum < /mnt/kv/direct)" "$want_d"
	check "$fs unmounts" umount /mnt/kv
	if [ $fs = xfs ]; then
		check "xfs_repair -n is clean" xfs_repair -n $dev
	else
		check "e2fsck -fn is clean" e2fsck -fn $dev
	fi
	check "$fs: remounts" mount $dev /mnt/kv
	expect_eq "$fs: buffered checksum after remount" "$(md5sum < /mnt/kv/buffered)" "$want_b"
	expect_eq "$fs: O_DIRECT checksum after remount" "$(md5sum < /mnt/kv/direct)" "$want_d"
	if [ $fs = ext4 ]; then
		step "ext4: SIGTERM (no --keep) while mounted and written to, start again with --attach"
		$T write /mnt/kv/planned 2 $KIB --seed 8 --direct --chunk 256 > /tmp/wk.log 2>&1 &
		WK=$!
		wait_until 120 sh -c "[ \$(stat -c %s /mnt/kv/planned 2>/dev/null || echo 0) -ge $((KIB * 1024 / 4)) ]" ||
			echo "note: the writer finished early"
		kill -TERM $KPID
		check "ext4: kvfdpd exits 0 on SIGTERM while mounted" wait $KPID
		tail -n 1 "$OUT/kvfdpd_ext4_recover.log"
		check "ext4: it says the device is in use and left for --attach" \
			grep -qF "$dev is in use (mounted?): leaving it, I/O held, for the next kvfdpd to re-attach (--dev-id 0 --attach" \
			"$OUT/kvfdpd_ext4_recover.log"
		check "ext4: the mounted device stays" test -b $dev
		if kill -0 $WK 2>/dev/null; then echo "the writer waits on the held device"; else echo "note: the writer finished before the stop"; fi
		start_kvfdpd kvfdpd_ext4_planned.log --dev-id 0 --attach
		check "ext4: the writer across the stop finishes without an I/O error" wait $WK
		cat /tmp/wk.log
		$T snap $SOCK status /tmp/ps.json
		expect_eq "ext4: re-attached after the stop" "$($T get /tmp/ps.json recovery recovered)" true
		expect_eq "ext4: checksum of the file written across the stop" "$(md5sum < /mnt/kv/planned)" "$want_d"
		check "ext4: data written before the stop is intact" sh -c "[ \"\$(md5sum < /mnt/kv/direct)\" = \"$want_d\" ]"
		check "ext4 unmounts after the stop" umount /mnt/kv
		check "e2fsck -fn is clean after the stop" e2fsck -fn $dev
	else
		umount /mnt/kv
	fi
	kill -TERM $KPID
	check "$fs: recovered kvfdpd exits 0 on SIGTERM" wait $KPID
	check "$fs: with nothing mounted, SIGTERM removes the device" sh -c "! test -e $dev"
done
finish
