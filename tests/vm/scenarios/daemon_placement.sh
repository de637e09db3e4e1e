#!/bin/sh
# daemon_placement: kvfdpd on the FDP namespace; hinted files (buffered and O_DIRECT) land on their class's handle (RUAMW vs kvfdpd counters, nvme fdp status), data survives remount, `files` lists them with class, bytes and measured lifetime; on XFS and ext4.
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 300
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock

# The class -> handle map this run configures (not the built-in one): the placement check
# expects exactly it, so a wrong map that kvfdpd reports consistently still fails.
MAP="not_set=0 none=0 short=5 medium=7 long=6 extreme=3"
hint_map_config "$MAP" /tmp/kvfdp.toml
cp /tmp/kvfdp.toml "$OUT/kvfdp.toml"

step "start kvfdpd on /dev/ng0n1 with the map $MAP"
kvfdpd --device /dev/ng0n1 --config /tmp/kvfdp.toml --socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
cat "$OUT/kvfdpd.log"
check "ublkb0 is a block device" test -b /dev/ublkb0
$T snap $SOCK status "$OUT/status0.json"
expect_eq "tagger active" "$($T get "$OUT/status0.json" tagging active)" true
expect_eq "ublk logical block size" "$(cat /sys/block/ublkb0/queue/logical_block_size)" "$KVFDP_LBA"
expect_eq "discard advertised" "$([ "$(cat /sys/block/ublkb0/queue/discard_max_bytes)" -gt 0 ] && echo yes)" yes

modprobe xfs 2>/dev/null
for fs in xfs ext4; do
	step "$fs: mkfs, mount -o discard, hinted writes"
	if [ $fs = xfs ]; then mkfs.xfs -q -f /dev/ublkb0; else mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/ublkb0; fi
	mkdir -p /mnt/kv
	check "$fs mounts with -o discard" mount -o discard /dev/ublkb0 /mnt/kv || continue
	hinted_writes "$fs: " $SOCK /mnt/kv
	step "$fs: per-class bytes and RUAMW per handle"
	# Two files per class; not_set also carries the filesystem's own metadata.
	hinted_placement_check "$fs: " $SOCK
	$T snap $SOCK ruh "$OUT/ruh_$fs.json"
	$T snap $SOCK status "$OUT/status_$fs.json"
	step "$fs: remount, checksums"
	check "$fs remounts" mount /dev/ublkb0 /mnt/kv
	check "$fs: checksums match after remount" sh -c 'cd /mnt/kv && md5sum -c /tmp/sums'
	step "$fs: files reply (the tagger's per-file records)"
	check "$fs: files lists a live LONG file with bytes" $T file-seen $SOCK long live
	rm /mnt/kv/b2 /mnt/kv/d2
	sync
	check "$fs: a deleted SHORT file with its lifetime" wait_until 20 $T file-seen $SOCK short deleted
	$T snap $SOCK files "$OUT/files_$fs.json"
	umount /mnt/kv
done

step "tagger coverage: every write, discard and write zeroes kvfdpd served was classified (less runs the kernel skipped)"
check "the tagger classified what kvfdpd served" $T tagger-coverage $SOCK

step "data path: zero copy where the driver offers UBLK_F_AUTO_BUF_REG (GET_FEATURES), else copy with a note"
$T snap $SOCK status "$OUT/status_end.json"
mode=$($T get "$OUT/status_end.json" data_path mode)
note=$($T get "$OUT/status_end.json" data_path note)
echo "data path: $mode ($note)"
copied=$($T get "$OUT/status_end.json" io copied_bytes)
moved=$(( $($T get "$OUT/status_end.json" io read_bytes) + $($T get "$OUT/status_end.json" io write_bytes) ))
check "some data moved" test "$moved" -gt 0
ublk_offers AUTO_BUF_REG || :
echo "ublk features offered:$KVFDP_UBLK_FEATURES"
if ublk_offers AUTO_BUF_REG; then
	expect_eq "data path with AUTO_BUF_REG offered ($KVFDP_KERNEL)" "$mode" zero-copy
	expect_eq "bytes copied in zero-copy mode" "$copied" 0
elif ublk_offers SUPPORT_ZERO_COPY; then
	expect_eq "data path with only SUPPORT_ZERO_COPY offered ($KVFDP_KERNEL)" "$mode" zero-copy-register
	expect_eq "bytes copied in zero-copy mode" "$copied" 0
else
	expect_eq "data path on $KVFDP_KERNEL" "$mode" copy
	check "the copy-mode note names the missing feature" sh -c "echo '$note' | grep -q UBLK_F_AUTO_BUF_REG"
	expect_eq "bytes copied in copy mode = bytes read + written" "$copied" "$moved"
fi
kvfdp status --socket $SOCK > "$OUT/kvfdp-status.txt" 2>&1
cat "$OUT/kvfdp-status.txt"
check "kvfdp status shows the data path" grep -q "data path" "$OUT/kvfdp-status.txt"
check "kvfdp metrics carry kvfdp_copied_bytes_total" sh -c "$T ctl $SOCK '{\"cmd\":\"metrics\"}' | grep -q kvfdp_copied_bytes_total"

step "files: limit"
check "a large files limit is lowered to 2000" sh -c "$T ctl $SOCK '{\"cmd\":\"files\",\"limit\":5000}' | grep -q '\"limit\":2000'"
check "limit 1 gives one row" sh -c "$T ctl $SOCK '{\"cmd\":\"files\",\"limit\":1}' | grep -o '\"ino\"' | wc -l | grep -qx 1"
$T ctl $SOCK '{"cmd":"files","limit":0}' > /tmp/fl
check "limit 0 is refused with a one-line error" grep -q "\"ok\":false.*files: 'limit' must be a positive integer" /tmp/fl

step "SIGTERM drains and removes the device"
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
check "/dev/ublkb0 is gone" sh -c '! test -e /dev/ublkb0'
cat "$OUT/kvfdpd.log" | tail -5
finish
