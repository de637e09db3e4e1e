#!/bin/sh
# daemon_config: a bad config and a non-FDP namespace each fail with one line and leave no ublk device; SIGHUP reloads (a bad reload keeps the old policy); the control socket survives bad input; on XFS and ext4.
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 512M --plain-ns 64M --timeout 240
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock

no_ublk_left() { ! ls /dev/ublkb* /dev/ublkc* > /dev/null 2>&1; }
# refused DESC EXPECTED_TEXT ARGS...: kvfdpd exits 1 with one stderr line holding the text.
refused() {
	desc=$1; want=$2; shift 2
	kvfdpd --socket $SOCK "$@" > /tmp/out 2> /tmp/err
	rc=$?
	echo "kvfdpd $*: rc=$rc: $(cat /tmp/err)"
	expect_eq "$desc: exit status" "$rc" 1
	expect_eq "$desc: one line on stderr" "$(wc -l < /tmp/err)" 1
	check "$desc: the message says '$want'" grep -qF "$want" /tmp/err
	check "$desc: no ublk device left behind" no_ublk_left
}

step "bad configs are refused before any device exists"
printf '[placement]\nlong = 9\n' > /tmp/bad_handle.toml
refused "handle out of range" "/tmp/bad_handle.toml:2: placement.long: handle 9 out of range (device has 8 handles" \
	--device /dev/ng0n1 --config /tmp/bad_handle.toml
printf '# typo\n[plcement]\nshort = 1\n' > /tmp/bad_table.toml
refused "unknown table" "/tmp/bad_table.toml:2: plcement: unknown table" --device /dev/ng0n1 --config /tmp/bad_table.toml
printf '[placement]\nshort = 1\n[[rule]]\npath = "/mnt/kv/x"\nclass = "forever"\n' > /tmp/bad_rule.toml
refused "unknown class in a rule" "/tmp/bad_rule.toml:5: rule[0].class: unknown class" --device /dev/ng0n1 --config /tmp/bad_rule.toml
refused "missing config file" "/tmp/none.toml" --device /dev/ng0n1 --config /tmp/none.toml

step "a namespace without FDP is refused"
if [ "$KVFDP_PLAIN" = 1 ]; then
	refused "non-FDP namespace" "FDP" --device /dev/ng1n1
else
	skip "no --plain-ns namespace"
fi
refused "a block device instead of the ng device" "/dev/ng0n1" --device /dev/nvme0n1

step "SIGHUP reloads the policy; a bad reload keeps the old one"
printf '[placement]\nshort = 1\n' > /tmp/kvfdp.toml
kvfdpd --device /dev/ng0n1 --config /tmp/kvfdp.toml --socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
dev=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
gen() { $T ctl $SOCK '{"cmd":"policy"}' | sed -n 's/.*"generation":\([0-9]*\).*/\1/p'; }
short_handle() { $T snap $SOCK policy /tmp/pol.json && $T get /tmp/pol.json map 2 handle; }
handle_bytes() { $T snap $SOCK ruh /tmp/r.json && $T get /tmp/r.json ruhss "$1" bytes; }
expect_eq "short starts on handle 1" "$(short_handle)" 1

modprobe xfs 2>/dev/null
g=$(gen)
for fs in xfs ext4; do
	if [ $fs = xfs ]; then mkfs.xfs -q -f $dev; else mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $dev; fi
	mkdir -p /mnt/kv
	check "$fs mounts" mount -o discard $dev /mnt/kv || continue
	new=$((6 + ($g % 2)))   # alternate 6 / 7 so each filesystem sees a change
	printf '[placement]\nshort = %s\n' $new > /tmp/kvfdp.toml
	kill -HUP $KPID
	check "$fs: SIGHUP bumps the generation" wait_until 20 sh -c "[ \"\$($T ctl $SOCK '{\"cmd\":\"policy\"}' | sed -n 's/.*\"generation\":\([0-9]*\).*/\1/p')\" = $((g + 1)) ]"
	g=$((g + 1))
	expect_eq "$fs: short now maps to handle $new" "$(short_handle)" $new
	b0=$(handle_bytes $new)
	check "$fs: a SHORT O_DIRECT file" $T write /mnt/kv/s 2 1024 --direct
	b1=$(handle_bytes $new)
	expect_eq "$fs: its bytes went to handle $new" "$((b1 - b0))" 1048576

	printf '[placement]\nshort = 42\n' > /tmp/kvfdp.toml
	kill -HUP $KPID
	check "$fs: the bad reload is logged" wait_until 20 grep -q "placement.short: handle 42 out of range.*old policy kept" "$OUT/kvfdpd.log"
	expect_eq "$fs: generation unchanged" "$(gen)" $g
	expect_eq "$fs: short still on handle $new" "$(short_handle)" $new
	$T ctl $SOCK '{"cmd":"reload"}' > /tmp/rr
	check "$fs: reload over the socket refuses it too" grep -q '"ok":false.*old policy kept' /tmp/rr
	umount /mnt/kv
done

step "the control socket survives bad input"
$T ctl $SOCK 'not json' > /tmp/c1
check "malformed: error reply" grep -q '"error":"malformed request' /tmp/c1
$T ctl $SOCK '{"cmd":"frobnicate"}' > /tmp/c2
check "unknown cmd: error reply" grep -q "unknown cmd 'frobnicate'" /tmp/c2
$T ctl $SOCK "$(head -c 70000 /dev/zero | tr '\0' x)" > /tmp/c3
check "oversized line: error reply" grep -q 'exceeds 65536 bytes' /tmp/c3
check "metrics still answer" sh -c "$T ctl $SOCK '{\"cmd\":\"metrics\"}' | grep -q kvfdp_class_bytes_total"
check "stats answer (FDP log 0x22)" sh -c "$T ctl $SOCK '{\"cmd\":\"stats\"}' | grep -q hbmw"
check "kvfdpd is still running" kill -0 $KPID
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
check "no ublk device left behind" no_ublk_left
finish
