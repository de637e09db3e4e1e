#!/bin/sh
# daemon_claim: one kvfdpd per namespace, none on a namespace whose /dev/nvme0n1 is mounted: each refusal is one line naming the other user, exits 1 and creates no ublk device; while kvfdpd serves, /dev/nvme0n1 cannot be mounted.
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 512M --timeout 240
. /lib/kvfdp/vm-lib.sh
need_ublk
need kvfdpd
SOCK=/tmp/kvfdpd.sock

# refused LOG ARGS...: runs a kvfdpd that must be refused (exit 1) with one line in LOG.
refused() {
	log=$1; shift
	kvfdpd --device /dev/ng0n1 --ready-file /tmp/second.ready "$@" > "$OUT/$log" 2>&1
	rc=$?
	cat "$OUT/$log"
	expect_eq "refused with exit 1 ($*)" $rc 1
	expect_eq "the refusal is one line ($*)" "$(grep -c . "$OUT/$log")" 1
	check "it never got ready ($*)" sh -c "! test -e /tmp/second.ready"
}

step "first kvfdpd on /dev/ng0n1"
kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready --dev-id 0 > "$OUT/first.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/first.log"; die "the first kvfdpd did not become ready"; }

step "a second kvfdpd on the same namespace is refused, naming the first"
refused second.log --socket /tmp/second.sock
check "it names pid, program, namespace and disk" \
	grep -qF "pid $KPID (kvfdpd) serves /dev/ng0n1 as /dev/ublkb0" "$OUT/second.log"
check "it created no second ublk device" sh -c "! test -e /dev/ublkc1 && ! test -e /dev/ublkb1"
step "while kvfdpd serves, /dev/nvme0n1 cannot be mounted or formatted"
mkdir -p /mnt/raw
check "mkfs.ext4 /dev/nvme0n1 is refused (the claim)" sh -c "! mkfs.ext4 -q -F /dev/nvme0n1 2>/dev/null"
kill -TERM $KPID
check "the first kvfdpd exits 0" wait $KPID
check "its device is removed" sh -c "! test -e /dev/ublkb0"

step "a namespace whose block device is mounted is refused"
check "mkfs.ext4 /dev/nvme0n1" mkfs.ext4 -q -F /dev/nvme0n1
check "mount /dev/nvme0n1 /mnt/raw" mount /dev/nvme0n1 /mnt/raw
refused mounted.log --socket /tmp/third.sock
check "it names the mount point" grep -qF "/dev/nvme0n1 is mounted at /mnt/raw" "$OUT/mounted.log"
check "it created no ublk device" sh -c "! test -e /dev/ublkc0 && ! test -e /dev/ublkb0"
check "umount /mnt/raw" umount /mnt/raw

step "unmounted, the namespace can be served again"
rm -f /tmp/kvfdpd.ready
kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/again.log" 2>&1 &
KPID=$!
check "kvfdpd gets ready" wait_for /tmp/kvfdpd.ready 60
kill -TERM $KPID
check "it exits 0" wait $KPID
finish
