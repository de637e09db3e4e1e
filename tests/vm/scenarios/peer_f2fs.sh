#!/bin/sh
# peer_f2fs: the kernel's own peer side by side (issue 23 item 6, bench): one chunk-store workload of three lifetimes (SHORT, MEDIUM, EXTREME chunk files, deleted in lifetime order) on kvfdpd --placement learned and class (hint) placement under XFS, and on f2fs on the raw FDP namespace with its write streams, with and without the engine's hints; every NVMe write command (with its placement ID), every discard and every file's extents go into one ftrace trace per stack, which peer_f2fs.check turns into bytes per handle by lifetime and a `kvfdp simulate --blk-trace` CSV (docs/RESULTS.md, "The kernel's own peer").
# vm-args: --kernel 7.3 --flavour generic --lba 4096 --nruh 8 --runs 1M --nsze 256M --timeout 600
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp kvfdp-daemon-vmtool nvme mkfs.xfs mkfs.f2fs
need_ublk
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock
TR=/sys/kernel/tracing
MNT=/mnt/kv
# The workload (kvfdp-daemon-vmtool chunks): 256 KiB chunk files; each of 32 rounds writes 32 SHORT
# files (dead at the end of the next round), 16 MEDIUM ones (dead 10 rounds later) and, in the
# first 12 rounds, 16 EXTREME ones (never deleted), interleaved file by file. 432 MiB written, at
# most 108 MiB live, on a 256 MiB namespace: mkfs.f2fs gives a filesystem this small 35 of its 120
# main segments as over-provisioning and 21 more as reserved (about 170 MiB for files: df showed
# 72 MiB available with 96 MiB of files at the end), so f2fs runs up to two-thirds full.
WORKLOAD="--chunk-kib 256 --rounds 32 --short 32 --medium 16 --long 16 --long-rounds 12 --medium-life 10"
echo "$WORKLOAD" > "$OUT/workload.txt"

step "the guest: kernel, f2fs, write streams, the NVMe and block trace events"
uname -r | tee "$OUT/kernel.txt"
modprobe f2fs 2>/dev/null
grep -qw f2fs /proc/filesystems || skip "f2fs: kernel $(uname -r) has no f2fs (run with --flavour generic)"
write_streams nvme0n1 || skip "write-streams: kernel $(uname -r) has no write streams on nvme0n1 (6.16+)"
expect_eq "nvme0n1 max_write_streams (one per handle)" "$(cat /sys/block/nvme0n1/queue/max_write_streams)" "$KVFDP_NRUH"
test -d $TR/events/nvme/nvme_setup_cmd || skip "nvme-trace: no nvme:nvme_setup_cmd trace event in $(uname -r)"
cat $TR/events/nvme/nvme_setup_cmd/format > "$OUT/nvme_setup_cmd.format"
modprobe xfs 2>/dev/null
echo 0 > $TR/tracing_on
echo global > $TR/trace_clock
echo 16384 > $TR/buffer_size_kb
# Write and Write Zeroes commands of the I/O queues (opcode 1 and 8, qid > 0) and discards (rwbs D); the markers are the
# chunk store's (kvfdp-ext CLASS LBA NLB: a file's extents, as FIEMAP gives them).
check "filter the NVMe event to I/O writes" sh -c "echo '(opcode == 1 || opcode == 8) && qid != 0' > $TR/events/nvme/nvme_setup_cmd/filter"
echo 'rwbs ~ "*D*"' > $TR/events/block/block_rq_issue/filter || echo "block_rq_issue: no filter (the host keeps the discards)"
echo 1 > $TR/events/nvme/nvme_setup_cmd/enable
echo 1 > $TR/events/block/block_rq_issue/enable

# trace_begin NAME: a fresh namespace (deallocated whole), log 0x22 saved, tracing on
trace_begin() {
	blkdiscard /dev/nvme0n1 || die "blkdiscard /dev/nvme0n1"
	kvfdp -d /dev/ng0n1 -o json stats > "$OUT/fdpstats_$1_0.json" 2>&1
	nvme fdp status /dev/ng0n1 -o json > "$OUT/ruh_$1_0.json" 2>&1
	echo > $TR/trace
	echo 1 > $TR/tracing_on
}
# trace_end NAME: tracing off, the trace to $OUT/trace_NAME.txt, log 0x22 again
trace_end() {
	echo 0 > $TR/tracing_on
	cat $TR/trace > "$OUT/trace_$1.txt"
	kvfdp -d /dev/ng0n1 -o json stats > "$OUT/fdpstats_$1_1.json" 2>&1
	nvme fdp status /dev/ng0n1 -o json > "$OUT/ruh_$1_1.json" 2>&1
	_e=$(sed -n 's/^# entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\).*/\1 \2/p' "$OUT/trace_$1.txt")
	echo "$1: trace entries in buffer / written: $_e"
	check "$1: the trace lost no events" test "${_e% *}" = "${_e#* }"
}
marker() { echo "kvfdp-phase $*" > $TR/trace_marker; }

# run_chunks NAME [--hints]: the workload on $MNT, its summary in $OUT/chunks_NAME.json
run_chunks() {
	_n=$1; shift
	marker "run $_n"
	mkdir -p $MNT/c
	$T chunks $MNT/c $WORKLOAD --marker $TR/trace_marker "$@" > "$OUT/chunks_$_n.json" 2> "$OUT/chunks_$_n.err"
	_rc=$?
	cat "$OUT/chunks_$_n.json" "$OUT/chunks_$_n.err"
	expect_eq "$_n: the chunk store ran to the end" "$_rc" 0
	df -k $MNT | tee "$OUT/df_$_n.txt"
}

step "probe: which handle f2fs puts each hint on (1 MiB files, buffered and O_DIRECT)"
trace_begin probe
mkfs.f2fs -f -q /dev/nvme0n1 > "$OUT/mkfs_f2fs.log" 2>&1 || { cat "$OUT/mkfs_f2fs.log"; die "mkfs.f2fs /dev/nvme0n1"; }
mkdir -p $MNT
check "f2fs mounts on /dev/nvme0n1 (-o discard)" mount -t f2fs -o discard /dev/nvme0n1 $MNT || die "no f2fs mount"
grep " $MNT " /proc/mounts | tee "$OUT/mount_f2fs.txt"
marker "run probe"
for h in 0 1 2 3 4 5; do
	check "probe: buffered 1 MiB with hint $h" $T write $MNT/b$h $h 1024 --seed $((h + 1))
	check "probe: O_DIRECT 1 MiB with hint $h" $T write $MNT/d$h $h 1024 --direct --seed $((h + 11))
	$T mark $TR/trace_marker $((h + 20)) $MNT/b$h > /dev/null  # probe classes: 20 + hint buffered,
	$T mark $TR/trace_marker $((h + 30)) $MNT/d$h > /dev/null  # 30 + hint O_DIRECT
done
umount $MNT
marker "end probe"
trace_end probe

# kvfdpd on the namespace, XFS on its disk (the same mkfs and mount as daemon_learned)
xfs_stack() {  # NAME PLACEMENT-ARGS...
	_n=$1; shift
	step "$_n: kvfdpd $* on /dev/ng0n1, XFS (-o discard), the chunk store with hints"
	trace_begin $_n
	rm -f /tmp/kvfdpd.ready
	kvfdpd --device /dev/ng0n1 --config /tmp/kvfdp.toml --socket $SOCK --ready-file /tmp/kvfdpd.ready "$@" > "$OUT/kvfdpd_$_n.log" 2>&1 &
	KPID=$!
	wait_until 60 sh -c "test -e /tmp/kvfdpd.ready || ! kill -0 $KPID"
	test -e /tmp/kvfdpd.ready || { cat "$OUT/kvfdpd_$_n.log"; die "$_n: kvfdpd did not become ready"; }
	_dev=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
	# xfsprogs refuses filesystems under 300 MB unless run by fstests (its variables)
	TEST_DIR=/tmp TEST_DEV=$_dev QA_CHECK_FS=1 mkfs.xfs -q -f $_dev > /dev/null || die "$_n: mkfs.xfs"
	check "$_n: XFS mounts with -o discard" mount -t xfs -o discard $_dev $MNT || die "$_n: no mount"
	run_chunks $_n --hints
	kvfdp policy show --socket $SOCK --width 160 > "$OUT/policy_$_n.txt" 2>&1
	umount $MNT
	marker "end $_n"
	$T snap $SOCK ruh "$OUT/kvfdpd_ruh_$_n.json"
	$T snap $SOCK status "$OUT/kvfdpd_status_$_n.json"
	expect_eq "$_n: kvfdpd counted no I/O errors" "$($T get "$OUT/kvfdpd_status_$_n.json" io errors)" 0
	expect_eq "$_n: tagger active" "$($T get "$OUT/kvfdpd_status_$_n.json" tagging active)" true
	kill -TERM $KPID
	check "$_n: kvfdpd exits 0" wait $KPID
	trace_end $_n
}

f2fs_stack() {  # NAME [--hints]
	_n=$1; shift
	step "$_n: f2fs on /dev/nvme0n1 (write streams), the chunk store ${1:-without hints}"
	trace_begin $_n
	mkfs.f2fs -f -q /dev/nvme0n1 > /dev/null 2>&1 || die "$_n: mkfs.f2fs"
	check "$_n: f2fs mounts (-o discard)" mount -t f2fs -o discard /dev/nvme0n1 $MNT || die "$_n: no mount"
	run_chunks $_n "$@"
	cat /sys/kernel/debug/f2fs/status > "$OUT/f2fs_status_$_n.txt" 2>&1
	for f in /sys/fs/f2fs/nvme0n1/*; do [ -f "$f" ] && echo "$(basename "$f") $(cat "$f" 2>/dev/null | head -n 1)"; done > "$OUT/f2fs_sysfs_$_n.txt" 2>/dev/null
	umount $MNT
	marker "end $_n"
	trace_end $_n
}

echo '[placement]' > /tmp/kvfdp.toml  # the default class map: SHORT 1, MEDIUM 2, LONG 3, EXTREME 4
xfs_stack xfs_learned --placement learned --learn-state "" --learn-period 0.5
xfs_stack xfs_hint --placement class
f2fs_stack f2fs_hints --hints
f2fs_stack f2fs_nohints
finish
