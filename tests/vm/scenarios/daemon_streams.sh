#!/bin/sh
# daemon_streams: kvfdpd --backend streams on /dev/nvme0n1 (block write streams, Linux 6.16+): hinted files on ext4 land on their class's handle by the device's own RUAMW (and nvme fdp status on /dev/ng0n1), data survives remount, discard and flush go through; a namespace without streams and a char device are refused with one line naming --backend passthru; a mounted namespace and a second kvfdpd (streams or passthru) on it are refused in one line; --placement learned puts two cgroup writers of different lifetimes on two handles and a restart resumes the map.
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --plain-ns 64M --kernel 6.18 --timeout 300
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp kvfdp-daemon-vmtool nvme
need_ublk
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock

step "sysfs: write streams of the FDP namespace and of the plain one"
q=/sys/block/nvme0n1/queue
test -e $q/max_write_streams || skip "write-streams: kernel $(uname -r) has no queue/max_write_streams (block write streams are 6.16+): run this scenario on a kernel that has them (--kernel 6.18)"
expect_eq "nvme0n1 max_write_streams (one per handle, --nruh 8)" "$(cat $q/max_write_streams)" 8
expect_eq "nvme0n1 write_stream_granularity (the RU size, --runs 1M)" "$(cat $q/write_stream_granularity)" 1048576
expect_eq "nvme1n1 (no FDP) max_write_streams" "$(cat /sys/block/nvme1n1/queue/max_write_streams)" 0

step "refusals: a namespace without streams, a char device"
echo '[placement]' > /tmp/empty.toml
kvfdpd --backend streams --device /dev/nvme1n1 --config /tmp/empty.toml --socket /tmp/r.sock > /tmp/r1.log 2>&1
expect_eq "no streams: exit 1" "$?" 1
cat /tmp/r1.log
expect_eq "no streams: one line" "$(wc -l < /tmp/r1.log)" 1
check "no streams: the line says to use --backend passthru" grep -q -- "max_write_streams is 0.*--backend passthru" /tmp/r1.log
kvfdpd --backend streams --device /dev/ng0n1 --config /tmp/empty.toml --socket /tmp/r.sock > /tmp/r2.log 2>&1
expect_eq "char device: exit 1" "$?" 1
cat /tmp/r2.log
check "char device: names the block device and passthru" grep -q "not a block device.*/dev/nvmeXnY.*--backend passthru" /tmp/r2.log
check "no ublk device was left" sh -c '! test -e /dev/ublkb0'

step "claim: a namespace with a mounted filesystem is refused"
mkfs.ext4 -q -F /dev/nvme0n1 || die "mkfs.ext4 /dev/nvme0n1"
mkdir -p /mnt/raw
mount /dev/nvme0n1 /mnt/raw || die "cannot mount /dev/nvme0n1"
kvfdpd --backend streams --device /dev/nvme0n1 --config /tmp/empty.toml --socket /tmp/r.sock > /tmp/r3.log 2>&1
expect_eq "mounted: exit 1" "$?" 1
cat /tmp/r3.log
expect_eq "mounted: one line" "$(wc -l < /tmp/r3.log)" 1
check "mounted: the line names the mount point" grep -q "/dev/nvme0n1 is mounted at /mnt/raw: unmount it first" /tmp/r3.log
check "mounted: no ublk device was made" sh -c '! test -e /dev/ublkb0'
umount /mnt/raw

# The class -> handle map this run configures; the placement check expects exactly it.
MAP="not_set=0 none=0 short=5 medium=7 long=6 extreme=3"
hint_map_config "$MAP" /tmp/kvfdp.toml
cp /tmp/kvfdp.toml "$OUT/kvfdp.toml"

step "start kvfdpd --backend streams on /dev/nvme0n1 with the map $MAP"
kvfdpd --backend streams --device /dev/nvme0n1 --config /tmp/kvfdp.toml --socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
cat "$OUT/kvfdpd.log"
$T snap $SOCK status "$OUT/status0.json"
expect_eq "backend" "$($T get "$OUT/status0.json" device backend)" streams
expect_eq "handles = streams" "$($T get "$OUT/status0.json" device nruh)" 8
expect_eq "RU size from write_stream_granularity" "$($T get "$OUT/status0.json" device ru_size)" 1048576
expect_eq "tagger active" "$($T get "$OUT/status0.json" tagging active)" true
expect_eq "discard advertised" "$([ "$(cat /sys/block/ublkb0/queue/discard_max_bytes)" -gt 0 ] && echo yes)" yes

step "claim: a second kvfdpd on the namespace (streams or passthru) is refused naming the first"
kvfdpd --backend streams --device /dev/nvme0n1 --config /tmp/empty.toml --socket /tmp/r.sock > /tmp/r4.log 2>&1
expect_eq "second streams kvfdpd: exit 1" "$?" 1
cat /tmp/r4.log
expect_eq "second streams kvfdpd: one line" "$(wc -l < /tmp/r4.log)" 1
check "second streams kvfdpd: names the first and its disk" grep -q "pid $KPID (kvfdpd) serves /dev/nvme0n1 as /dev/ublkb0" /tmp/r4.log
kvfdpd --device /dev/ng0n1 --config /tmp/empty.toml --socket /tmp/r.sock > /tmp/r5.log 2>&1
expect_eq "passthru kvfdpd on the same namespace: exit 1" "$?" 1
cat /tmp/r5.log
expect_eq "passthru kvfdpd: one line" "$(wc -l < /tmp/r5.log)" 1
check "passthru kvfdpd: names the streams kvfdpd" grep -q "pid $KPID (kvfdpd)" /tmp/r5.log
check "no second ublk device" sh -c '! test -e /dev/ublkb1'

step "ext4: mkfs, mount -o discard, hinted writes"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/ublkb0
mkdir -p /mnt/kv
check "ext4 mounts with -o discard" mount -o discard /dev/ublkb0 /mnt/kv || die "no mount"
hinted_writes "ext4: " $SOCK /mnt/kv
cp /tmp/nvme_status.json "$OUT/nvme_status.json"
step "per-class bytes and RUAMW per handle (the drive's RUH Status, and nvme-cli's on /dev/ng0n1)"
hinted_placement_check "" $SOCK
$T snap $SOCK ruh "$OUT/ruh_end.json"
$T ctl $SOCK '{"cmd":"stats"}' > "$OUT/stats.json"
cat "$OUT/stats.json"
check "stats: log 0x22 read through the block device (admin ioctl), host bytes written > 0" grep -q '"ok":true.*"hbmw":[1-9]' "$OUT/stats.json"

step "remount, checksums, delete, fstrim (discard) and sync (flush)"
check "ext4 remounts" mount /dev/ublkb0 /mnt/kv
check "checksums match after remount" sh -c 'cd /mnt/kv && md5sum -c /tmp/sums'
rm /mnt/kv/b2 /mnt/kv/d2
check "fstrim" fstrim -v /mnt/kv
check "sync -f" sync -f /mnt/kv/b3
umount /mnt/kv
$T snap $SOCK status "$OUT/status_end.json"
check "discards reached kvfdpd" test "$($T get "$OUT/status_end.json" io discards)" -gt 0
check "flushes reached kvfdpd" test "$($T get "$OUT/status_end.json" io flushes)" -gt 0
expect_eq "no I/O errors" "$($T get "$OUT/status_end.json" io errors)" 0
expect_eq "data path" "$($T get "$OUT/status_end.json" data_path mode)" copy

step "SIGTERM drains and removes the device"
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
check "/dev/ublkb0 is gone" sh -c '! test -e /dev/ublkb0'
tail -5 "$OUT/kvfdpd.log"

# --placement learned on the streams backend: two unhinted writers in cgroups of their own, one
# whose files live long and one whose files die young (daemon_learned runs the full case on the
# model). The streams backend cannot send RUH Update: the learner counts the refusals and goes on.
step "learned: kvfdpd --backend streams --placement learned, writers in cgroups /engine and /staging"
writer_cgroups engine staging
start_learned() {
	rm -f /tmp/kvfdpd.ready
	kvfdpd --backend streams --device /dev/nvme0n1 --config /tmp/empty.toml --socket $SOCK --ready-file /tmp/kvfdpd.ready \
		--placement learned --learn-state /tmp/learned.state --learn-period 0.5 >> "$OUT/kvfdpd_learned.log" 2>&1 &
	KPID=$!
	wait_until 60 sh -c "test -e /tmp/kvfdpd.ready || ! kill -0 $KPID"
	test -e /tmp/kvfdpd.ready || { cat "$OUT/kvfdpd_learned.log"; die "kvfdpd --backend streams --placement learned did not become ready"; }
}
start_learned
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/ublkb0 || die "mkfs.ext4 /dev/ublkb0"
check "ext4 mounts with -o discard" mount -o discard /dev/ublkb0 /mnt/kv || die "no mount"
two_lifetimes learned /mnt/kv 8 12 2048 2048
g0=$(kvfdp policy show --socket $SOCK -o json | json_num recomputes)
wait_until 30 sh -c "test \$(kvfdp policy show --socket $SOCK -o json | sed -n 's/.*\"recomputes\": *\([0-9]*\).*/\1/p') -gt $((g0 + 1))"
kvfdp policy show --socket $SOCK --width 160 | tee "$OUT/policy_learned.txt"
kvfdp policy show --socket $SOCK -o json > "$OUT/policy_learned.json"
expect_eq "learned: placement mode" "$(sed -n 's/.*"placement": *"\([a-z]*\)".*/\1/p' "$OUT/policy_learned.json" | head -n 1)" learned
he=$(learned_handle_of "$OUT/policy_learned.txt" /engine@engine)
hs=$(learned_handle_of "$OUT/policy_learned.txt" /staging@staging)
echo "learned on streams: /engine on handle '$he', /staging on handle '$hs', groups $(json_num groups "$OUT/policy_learned.json"), RUH updates refused $(json_num ruh_update_refused "$OUT/policy_learned.json")"
check "learned: kvfdp policy lists the /engine writer" test -n "$he"
check "learned: kvfdp policy lists the /staging writer" test -n "$hs"
check "learned: the two writers are on two handles" test "$he" != "$hs"
(cd /mnt/kv/engine && md5sum e* > /tmp/sums)
umount /mnt/kv
$T snap $SOCK status "$OUT/status_learned.json"
expect_eq "learned: no I/O errors" "$($T get "$OUT/status_learned.json" io errors)" 0
$T snap $SOCK ruh "$OUT/ruh_learned.json"
check "learned: kvfdpd wrote on /engine's handle $he" test "$($T get "$OUT/ruh_learned.json" ruhss "$he" bytes)" -gt 0
check "learned: kvfdpd wrote on /staging's handle $hs" test "$($T get "$OUT/ruh_learned.json" ruhss "$hs" bytes)" -gt 0
kill -TERM $KPID
check "learned: kvfdpd exits 0" wait $KPID
check "learned: the state was saved" test -s /tmp/learned.state
step "learned: a restart on the same state resumes the map; the data is intact"
start_learned
kvfdp policy show --socket $SOCK --width 160 > "$OUT/policy_learned_restart.txt"
expect_eq "learned restart: /engine keeps handle $he" "$(learned_handle_of "$OUT/policy_learned_restart.txt" /engine@engine)" "$he"
expect_eq "learned restart: /staging keeps handle $hs" "$(learned_handle_of "$OUT/policy_learned_restart.txt" /staging@staging)" "$hs"
check "learned restart: ext4 mounts" mount /dev/ublkb0 /mnt/kv
check "learned restart: engine files' checksums" sh -c 'cd /mnt/kv/engine && md5sum -c /tmp/sums'
umount /mnt/kv
kill -TERM $KPID
check "learned restart: kvfdpd exits 0" wait $KPID
tail -5 "$OUT/kvfdpd_learned.log"
finish
