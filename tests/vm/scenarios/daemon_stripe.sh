#!/bin/sh
# daemon_stripe: kvfdpd striped over every FDP namespace of --fdp-ctrls N: a member given twice and a non-FDP member are refused in one line; status lists the members and the stripe size; XFS with hinted files of every class: per member and handle, the drive's RUAMW and HBMW moved by exactly what kvfdpd wrote there and each hinted class's handle carries its bytes over every member (kvfdp ruh/stats -o json, nvme fdp status per member); kill -9 mid-write and --dev-id 0 --attach: writers finish without an I/O error, xfs_repair -n is clean, fsync'ed files keep their md5sums.
# vm-args: --fdp-ctrls 2 --plain-ns 64M --lba 4096 --nruh 8 --runs 1M --nsze 512M --timeout 300
. /lib/kvfdp/vm-lib.sh
need_ublk
need kvfdpd kvfdp kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock
N=$KVFDP_FDP_CTRLS
[ "$N" -ge 2 ] || die "daemon_stripe needs --fdp-ctrls 2 or more (got $N)"
[ "$KVFDP_PLAIN" = 1 ] || die "daemon_stripe needs --plain-ns (the non-FDP member it refuses)"
DEVS= i=0
while [ $i -lt "$N" ]; do DEVS="$DEVS --device /dev/ng${i}n1"; i=$((i + 1)); done
HINT_BUF_KIB=4100 HINT_DIO_KIB=3076
HINT_SUM_KIB=$((HINT_BUF_KIB + HINT_DIO_KIB))
hint_map_config "not_set=0 none=0 short=5 medium=7 long=6 extreme=3" /tmp/kvfdp.toml

# refused CASE ARGS...: kvfdpd exits non-zero with one line on stderr naming the stripe member, and makes no disk
refused() {
	_case=$1; shift
	kvfdpd "$@" --config /tmp/kvfdp.toml --socket /tmp/refused.sock > "$OUT/refused_$_case.out" 2> "$OUT/refused_$_case.err"
	_rc=$?
	cat "$OUT/refused_$_case.err"
	check "$_case: kvfdpd exits non-zero" test "$_rc" -ne 0
	expect_eq "$_case: one line on stderr" "$(wc -l < "$OUT/refused_$_case.err")" 1
	check "$_case: the line names the stripe member" grep -q "stripe member" "$OUT/refused_$_case.err"
	check "$_case: no ublk disk was made" sh -c '! ls /dev/ublkb* >/dev/null 2>&1'
}
step "refusals"
refused twice --device /dev/ng0n1 --device /dev/ng1n1 --device /dev/ng0n1
check "twice: it says the same namespace" grep -q "same namespace" "$OUT/refused_twice.err"
refused non_fdp --device /dev/ng0n1 --device /dev/ng${N}n1
check "non_fdp: it names the plain namespace and FDP" grep -q "/dev/ng${N}n1.*FDP" "$OUT/refused_non_fdp.err"

start_kvfdpd() {  # $1: log name, then extra args
	_log=$1; shift
	rm -f /tmp/kvfdpd.ready
	kvfdpd $DEVS --config /tmp/kvfdp.toml --socket $SOCK --ready-file /tmp/kvfdpd.ready "$@" >> "$OUT/$_log" 2>&1 &
	KPID=$!
	wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/$_log"; die "kvfdpd did not become ready ($*)"; }
}
step "kvfdpd over $N members ($DEVS), as the systemd unit starts it (--dev-id 0 --attach --keep)"
start_kvfdpd kvfdpd.log --dev-id 0 --attach --keep
cat "$OUT/kvfdpd.log"
DEV=/dev/ublkb0
check "$DEV is a block device" test -b $DEV
$T snap $SOCK status "$OUT/status0.json"
expect_eq "status: members" "$($T get "$OUT/status0.json" device stripe members)" "$N"
UNIT=$($T get "$OUT/status0.json" device stripe stripe_bytes)
check "status: a stripe size, a multiple of 4 KiB" test $((UNIT % 4096)) = 0 -a "$UNIT" -gt 0
i=0
while [ $i -lt "$N" ]; do
	expect_eq "status: member $i" "$($T get "$OUT/status0.json" device stripe devices $i path)" /dev/ng${i}n1
	i=$((i + 1))
done
MNLB=$($T get "$OUT/status0.json" device stripe member_nlb)
expect_eq "disk size = members x member LBAs" "$(($(cat /sys/block/ublkb0/size) * 512))" "$((N * MNLB * KVFDP_LBA))"
kvfdp status --socket $SOCK > "$OUT/kvfdp-status.txt" 2>&1
cat "$OUT/kvfdp-status.txt"
check "kvfdp status shows the stripe" grep -q "^stripe: *$N members, stripe size" "$OUT/kvfdp-status.txt"
check "kvfdp status lists the last member" grep -q "^member $((N - 1)): */dev/ng$((N - 1))n1, nsid 1, .* FDP enabled" "$OUT/kvfdp-status.txt"
check "tagger active" test "$($T get "$OUT/status0.json" tagging active)" = true

step "XFS: mkfs, mount, hinted writes in every class"
modprobe xfs 2>/dev/null
check "mkfs.xfs" mkfs.xfs -q -f $DEV
mkdir -p /mnt/kv
check "xfs mounts" mount $DEV /mnt/kv || die "cannot go on without the filesystem"
snap_cli() {  # snap_cli SUFFIX: the CLI's own view and nvme-cli's per member
	check "kvfdp ruh -o json ($1)" sh -c "kvfdp ruh --socket $SOCK -o json > /tmp/members/ruh$1.json"
	check "kvfdp stats -o json ($1)" sh -c "kvfdp stats --socket $SOCK -o json > /tmp/members/stats$1.json"
}
mkdir -p /tmp/members
$T snap $SOCK status /tmp/members/st0.json
snap_cli 0
hinted_writes "" $SOCK /mnt/kv
snap_cli 1
i=0
while [ $i -lt "$N" ]; do nvme fdp status /dev/ng${i}n1 -o json > /tmp/members/nvme$i.json; i=$((i + 1)); done
cp /tmp/members/*.json "$OUT/"
step "per member and handle: RUAMW and HBMW against kvfdpd's bytes, each class spread over every member"
check "placement per member" $T members $SOCK /tmp/members \
	short=$HINT_SUM_KIB medium=$HINT_SUM_KIB long=$HINT_SUM_KIB extreme=$HINT_SUM_KIB not_set=$HINT_SUM_KIB $HINT_HANDLES
# Independently of kvfdpd's counters: each hinted class's two files, by their XFS extents and the
# stripe layout, put on each member exactly what kvfdpd wrote there on the class's handle.
check "xfs remounts for the extent maps" mount $DEV /mnt/kv
for m in "2 5" "3 7" "4 6" "5 3"; do
	set -- $m
	check "hint $1: its files' extents per member = kvfdpd's bytes per member on handle $2" $T extents /tmp/members $2 /mnt/kv/b$1 /mnt/kv/d$1
done
check "xfs unmounts" umount /mnt/kv
kvfdp ruh --socket $SOCK > "$OUT/kvfdp-ruh.txt" 2>&1
kvfdp stats --socket $SOCK > "$OUT/kvfdp-stats.txt" 2>&1
cat "$OUT/kvfdp-ruh.txt" "$OUT/kvfdp-stats.txt"
check "kvfdp ruh shows the last member's table" grep -q "^member $((N - 1)): /dev/ng$((N - 1))n1" "$OUT/kvfdp-ruh.txt"
check "kvfdp stats shows a row per member" grep -q "^ *$((N - 1)) */dev/ng$((N - 1))n1" "$OUT/kvfdp-stats.txt"
$T ctl $SOCK '{"cmd":"metrics"}' > "$OUT/metrics.json"
check "metrics carry a member label per member" grep -q "kvfdp_fdp_hbmw_bytes{member=\\\\\"$((N - 1))\\\\\",device=\\\\\"/dev/ng$((N - 1))n1" "$OUT/metrics.json"

step "kill -9 kvfdpd while two writers write, restart with --dev-id 0 --attach"
check "xfs remounts" mount $DEV /mnt/kv
STOP=/tmp/stop; rm -f $STOP
$T write /mnt/kv/wb 4 24576 --seed 7 --until $STOP --max-s 240 > /tmp/wb.log 2>&1 &
WB=$!
$T write /mnt/kv/wd 2 24576 --seed 8 --direct --chunk 256 --until $STOP --max-s 240 > /tmp/wd.log 2>&1 &
WD=$!
# written_at_least BYTES: the running kvfdpd wrote at least BYTES since it started
written_at_least() { [ "$($T ctl $SOCK '{"cmd":"status"}' | sed -n 's/.*"write_bytes":\([0-9]*\).*/\1/p')" -ge "$1" ] 2>/dev/null; }
w0=$($T ctl $SOCK '{"cmd":"status"}' | sed -n 's/.*"write_bytes":\([0-9]*\).*/\1/p')
check "the writers are under way (4 MiB through kvfdpd)" wait_until 120 written_at_least $((w0 + 4194304))
check "both writers are still writing at the kill" kill -0 $WB $WD
kill -9 $KPID
wait $KPID 2>/dev/null
check "the disk stays while its server is dead" test -b $DEV
start_kvfdpd kvfdpd_attach.log --dev-id 0 --attach
cat "$OUT/kvfdpd_attach.log"
$T snap $SOCK status /tmp/rs.json
expect_eq "re-attached (recovered)" "$($T get /tmp/rs.json recovery recovered)" true
expect_eq "still $N members after --attach" "$($T get /tmp/rs.json device stripe members)" "$N"
check "the writers write through the re-attached kvfdpd" wait_until 120 written_at_least 1048576
touch $STOP
check "buffered writer finished without an I/O error" wait $WB
check "O_DIRECT writer finished without an I/O error" wait $WD
cat /tmp/wb.log /tmp/wd.log
check "buffered file content" $T verify /mnt/kv/wb 7
check "O_DIRECT file content" $T verify /mnt/kv/wd 8
check "the hinted files written before the kill keep their md5sums" sh -c 'cd /mnt/kv && md5sum -c /tmp/sums'
check "xfs unmounts" umount /mnt/kv
check "xfs_repair -n is clean" xfs_repair -n $DEV
check "xfs remounts after the repair check" mount $DEV /mnt/kv
check "md5sums after remount" sh -c 'cd /mnt/kv && md5sum -c /tmp/sums'
check "O_DIRECT file content after remount" $T verify /mnt/kv/wd 8
umount /mnt/kv

step "SIGTERM with nothing mounted removes the disk"
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
check "$DEV is gone" sh -c "! test -e $DEV"
tail -n 3 "$OUT/kvfdpd_attach.log"
finish
