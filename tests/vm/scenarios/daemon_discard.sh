#!/bin/sh
# daemon_discard: with -o discard, deleting files reaches kvfdpd as DISCARD and becomes DSM deallocate, counted by kvfdpd and completed without error; on XFS and ext4.
# (The harness drive has no discard=unmap, so QEMU keeps the data: a read-back of zeroes cannot be checked.)
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 512M --timeout 240
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock

kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
dev=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
discard_bytes() { $T ctl $SOCK '{"cmd":"status"}' | sed -n 's/.*"discard_bytes":\([0-9]*\).*/\1/p'; }
discards() { $T ctl $SOCK '{"cmd":"status"}' | sed -n 's/.*"discards":\([0-9]*\).*/\1/p'; }

modprobe xfs 2>/dev/null
for fs in xfs ext4; do
	step "$fs: files written, then deleted"
	if [ $fs = xfs ]; then mkfs.xfs -q -f -K $dev; else mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 $dev; fi
	mkdir -p /mnt/kv
	check "$fs mounts with -o discard" mount -o discard $dev /mnt/kv || continue
	check "$fs: 8 MiB SHORT file" $T write /mnt/kv/a 2 8192 --direct
	check "$fs: 4 MiB LONG file" $T write /mnt/kv/b 4 4096
	sync
	n0=$(discards); b0=$(discard_bytes)
	rm /mnt/kv/a /mnt/kv/b
	sync
	# Online discard runs when the journal commits the deletion: wait for the bytes.
	check "$fs: kvfdpd counted the discards of both files" wait_until 60 sh -c \
		"[ \$($T ctl $SOCK '{\"cmd\":\"status\"}' | sed -n 's/.*\"discard_bytes\":\([0-9]*\).*/\1/p') -ge $((b0 + 12 * 1048576)) ]"
	n1=$(discards); b1=$(discard_bytes)
	echo "$fs: discards $n0 -> $n1, bytes $b0 -> $b1"
	expect_ge "$fs: at least one DISCARD request" "$((n1 - n0))" 1
	# The deallocates succeeded on the namespace (a failed DSM would count as an error).
	expect_eq "$fs: no I/O errors" "$($T ctl $SOCK '{"cmd":"status"}' | sed -n 's/.*"errors":\([0-9]*\).*/\1/p')" 0
	umount /mnt/kv
done
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
finish
