#!/bin/sh
# daemon_crash: kill -9 kvfdpd while writers are writing (time-bounded writers: a trial where one was done is repeated), restart it (XFS: --recover ID; ext4: --dev-id 0 --attach, as the systemd unit restarts it): the writer finishes without an I/O error, checksums match, fsck is clean; on XFS and ext4. ext4 also: a plain SIGTERM (no --keep) while mounted and written to leaves the device for --attach (no I/O error, fsck clean); SIGTERM with nothing mounted removes it.
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 300
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock
KIB=24576   # 24 MiB per writer pass (a writer rewrites it until told to stop)

start_kvfdpd() {  # $1: log name, then extra args
	log=$1; shift
	rm -f /tmp/kvfdpd.ready
	kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready "$@" >> "$OUT/$log" 2>&1 &
	KPID=$!
	wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/$log"; die "kvfdpd did not become ready ($*)"; }
}
# bytes the running kvfdpd wrote since it started
daemon_written() { $T ctl $SOCK '{"cmd":"status"}' | sed -n 's/.*"write_bytes":\([0-9]*\).*/\1/p'; }
# written_at_least BYTES: the running kvfdpd wrote at least BYTES since it started
written_at_least() { [ "$(daemon_written)" -ge "$1" ] 2>/dev/null; }
# quarter_or_gone FILE PID: FILE holds a quarter of a pass, or the writer PID is gone
quarter_or_gone() { [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge $((KIB * 1024 / 4)) ] || ! kill -0 "$2" 2>/dev/null; }
# alive PID...: every PID is still running
alive() { for _p in "$@"; do kill -0 "$_p" 2>/dev/null || return 1; done; }
# Writers are bounded by time, not size (vmtool write --until): each rewrites its file's fixed
# content (KIB, then from offset 0 again) until $STOP appears, so it is still writing whenever
# kvfdpd is killed or stopped; a trial whose writer is not running at that moment is repeated.
TRIALS=3

modprobe xfs 2>/dev/null
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

	step "$fs: two writers (buffered LONG, O_DIRECT SHORT), kill -9 kvfdpd while both write"
	trial=1
	while :; do
		STOP=/tmp/stop_$fs; rm -f $STOP
		$T write /mnt/kv/buffered 4 $KIB --seed 7 --until $STOP --max-s 240 > /tmp/wb.log 2>&1 &
		WB=$!
		$T write /mnt/kv/direct 2 $KIB --seed 8 --direct --chunk 256 --until $STOP --max-s 240 > /tmp/wd.log 2>&1 &
		WD=$!
		# Kill once the O_DIRECT writer is a quarter through its first pass: requests are in flight then.
		wait_until 120 quarter_or_gone /mnt/kv/direct $WD
		alive $WB $WD && break
		touch $STOP; wait $WB; rb=$?; wait $WD; rd=$?
		cat /tmp/wb.log /tmp/wd.log
		[ $rb = 0 ] && [ $rd = 0 ] || die "$fs: a writer failed before kvfdpd was killed (buffered $rb, O_DIRECT $rd)"
		[ $trial -lt $TRIALS ] || die "$fs: the writers were done before the kill in $TRIALS trials"
		echo "note: a writer was done before the kill; trial $((trial + 1))"
		trial=$((trial + 1))
	done
	before=$(daemon_written)
	kill -9 $KPID
	wait $KPID 2>/dev/null
	echo "killed kvfdpd after $before bytes written (trial $trial)"
	check "$fs: both writers were still writing when kvfdpd was killed" alive $WB $WD
	check "the device stays while its server is dead" test -b $dev

	if [ $fs = xfs ]; then restart_args="--recover $id"; else restart_args="--dev-id 0 --attach"; fi
	step "$fs: kvfdpd $restart_args"
	start_kvfdpd kvfdpd_${fs}_recover.log $restart_args
	cat "$OUT/kvfdpd_${fs}_recover.log"
	$T snap $SOCK status /tmp/rs.json
	expect_eq "$fs: recovered flag" "$($T get /tmp/rs.json recovery recovered)" true
	expect_eq "$fs: recovered device id" "$($T get /tmp/rs.json device ublk_id)" "$id"
	# the writers go on through the recovered kvfdpd: a MiB of theirs reaches it before the stop
	check "$fs: the writers write through the recovered kvfdpd" wait_until 120 written_at_least 1048576
	touch $STOP
	check "$fs: buffered writer finished without an I/O error" wait $WB
	check "$fs: O_DIRECT writer finished without an I/O error" wait $WD
	cat /tmp/wb.log /tmp/wd.log
	check "$fs: buffered file content" $T verify /mnt/kv/buffered 7
	check "$fs: O_DIRECT file content" $T verify /mnt/kv/direct 8
	check "$fs unmounts" umount /mnt/kv
	if [ $fs = xfs ]; then
		check "xfs_repair -n is clean" xfs_repair -n $dev
	else
		check "e2fsck -fn is clean" e2fsck -fn $dev
	fi
	check "$fs: remounts" mount $dev /mnt/kv
	check "$fs: buffered content after remount" $T verify /mnt/kv/buffered 7
	check "$fs: O_DIRECT content after remount" $T verify /mnt/kv/direct 8
	if [ $fs = ext4 ]; then
		step "ext4: SIGTERM (no --keep) while mounted and written to, start again with --attach"
		trial=1
		while :; do
			STOP=/tmp/stop_planned; rm -f $STOP
			$T write /mnt/kv/planned 2 $KIB --seed 9 --direct --chunk 256 --until $STOP --max-s 240 > /tmp/wk.log 2>&1 &
			WK=$!
			wait_until 120 quarter_or_gone /mnt/kv/planned $WK
			alive $WK && break
			touch $STOP; wait $WK || { cat /tmp/wk.log; die "ext4: the writer failed before the stop"; }
			[ $trial -lt $TRIALS ] || die "ext4: the writer was done before the stop in $TRIALS trials"
			echo "note: the writer was done before the stop; trial $((trial + 1))"
			trial=$((trial + 1))
		done
		kill -TERM $KPID
		check "ext4: kvfdpd exits 0 on SIGTERM while mounted" wait $KPID
		tail -n 1 "$OUT/kvfdpd_ext4_recover.log"
		check "ext4: it says the device is in use and left for --attach" \
			grep -qF "$dev is in use (mounted?): leaving it, I/O held, for the next kvfdpd to re-attach (--dev-id 0 --attach" \
			"$OUT/kvfdpd_ext4_recover.log"
		check "ext4: the mounted device stays" test -b $dev
		check "ext4: the writer was still writing at the stop (it waits on the held device)" alive $WK
		start_kvfdpd kvfdpd_ext4_planned.log --dev-id 0 --attach
		check "ext4: the writer writes through the re-attached kvfdpd" wait_until 120 written_at_least 1048576
		touch $STOP
		check "ext4: the writer across the stop finishes without an I/O error" wait $WK
		cat /tmp/wk.log
		$T snap $SOCK status /tmp/ps.json
		expect_eq "ext4: re-attached after the stop" "$($T get /tmp/ps.json recovery recovered)" true
		check "ext4: content of the file written across the stop" $T verify /mnt/kv/planned 9
		check "ext4: data written before the stop is intact" $T verify /mnt/kv/direct 8
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
