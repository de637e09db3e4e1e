#!/bin/sh
# daemon_config: a bad config (bad TOML, a directory, a FIFO, /dev/zero), a bad socket path, a bad command line (exit 2) and a non-FDP namespace each fail with one line and leave no ublk device (nor the model's --file); a reload of a non-regular config keeps the old policy; SIGHUP reloads (a bad reload keeps the old policy); a [[writer]] naming a missing cgroup or directory is logged and skipped, at start and on reload, and kvfdpd serves on; sd_notify READY/RELOADING/STOPPING reach NOTIFY_SOCKET; --attach refuses a served device; --force-remove removes a mounted device; the control socket survives bad input; on XFS and ext4.
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 512M --plain-ns 64M --timeout 240
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock

no_ublk_left() { ! ls /dev/ublkb* /dev/ublkc* > /dev/null 2>&1; }
# refused_rc RC DESC EXPECTED_TEXT ARGS...: kvfdpd exits RC (within 60 s: a FIFO must not
# hang it) with one stderr line holding the text, and leaves no ublk device.
refused_rc() {
	want_rc=$1; desc=$2; want=$3; shift 3
	timeout 60 kvfdpd "$@" > /tmp/out 2> /tmp/err
	rc=$?
	echo "kvfdpd $*: rc=$rc: $(cat /tmp/err)"
	expect_eq "$desc: exit status" "$rc" "$want_rc"
	expect_eq "$desc: one line on stderr" "$(wc -l < /tmp/err)" 1
	check "$desc: the message says '$want'" grep -qF -- "$want" /tmp/err
	check "$desc: no ublk device left behind" no_ublk_left
}
# refused DESC EXPECTED_TEXT ARGS...: a configuration refusal (exit 1).
refused() { desc=$1; want=$2; shift 2; refused_rc 1 "$desc" "$want" --socket $SOCK "$@"; }

step "bad configs are refused before any device exists"
printf '[placement]\nlong = 9\n' > /tmp/bad_handle.toml
refused "handle out of range" "/tmp/bad_handle.toml:2: placement.long: handle 9 out of range (device has 8 handles" \
	--device /dev/ng0n1 --config /tmp/bad_handle.toml
printf '# typo\n[plcement]\nshort = 1\n' > /tmp/bad_table.toml
refused "unknown table" "/tmp/bad_table.toml:2: plcement: unknown table" --device /dev/ng0n1 --config /tmp/bad_table.toml
printf '[placement]\nshort = 1\n[[rule]]\npath = "/mnt/kv/x"\nclass = "forever"\n' > /tmp/bad_rule.toml
refused "unknown class in a rule" "/tmp/bad_rule.toml:5: rule[0].class: unknown class" --device /dev/ng0n1 --config /tmp/bad_rule.toml
printf '[placement]\nshort = \n' > /tmp/bad_syntax.toml
refused "TOML syntax error" "/tmp/bad_syntax.toml:2: " --device /dev/ng0n1 --config /tmp/bad_syntax.toml
check "TOML syntax error: says to fix the line" grep -q "not valid TOML: fix that line" /tmp/err
refused "missing config file" "/tmp/none.toml" --device /dev/ng0n1 --config /tmp/none.toml
mkdir -p /tmp/cfgdir
mkfifo /tmp/cfgfifo
refused "config is a directory" "/tmp/cfgdir is a directory, not a regular file" --device /dev/ng0n1 --config /tmp/cfgdir
refused "config is a FIFO (no hang)" "/tmp/cfgfifo is a FIFO, not a regular file" --device /dev/ng0n1 --config /tmp/cfgfifo
refused "config is /dev/zero (no abort)" "/dev/zero is a character device, not a regular file" --device /dev/ng0n1 --config /dev/zero
refused "model: a bad config is refused before its --file exists" "handle 9 out of range (device has 8 handles" \
	--backend model --file /tmp/model.img --size 64M --nruh 8 --no-tagger --config /tmp/bad_handle.toml
check "model: no --file was created" sh -c "! test -e /tmp/model.img"

step "a bad socket path or command line is refused before any device exists (exit 1 / exit 2)"
printf 'keep\n' > /tmp/notsock
refused_rc 1 "socket path is a regular file" "/tmp/notsock exists and is not a socket" --device /dev/ng0n1 --socket /tmp/notsock
expect_eq "the regular file is left as it was" "$(cat /tmp/notsock)" keep
refused_rc 1 "socket path too long" "pass a shorter --socket" --device /dev/ng0n1 --socket /tmp/$(printf '%0120d' 0)
refused_rc 2 "unknown option (not CLI11's 109)" "--no-such-option" --device /dev/ng0n1 --no-such-option
refused_rc 2 "bad option value (not CLI11's 105)" "--depth" --device /dev/ng0n1 --depth many
refused_rc 2 "contradicting options" "--keep and --force-remove contradict" --device /dev/ng0n1 --keep --force-remove

step "a namespace without FDP is refused"
if [ "$KVFDP_PLAIN" = 1 ]; then
	refused "non-FDP namespace" "FDP" --device /dev/ng1n1
else
	skip "no --plain-ns namespace"
fi
refused "a block device instead of the ng device" "/dev/ng0n1" --device /dev/nvme0n1

step "a full backing store: the writer gets ENOSPC, kvfdpd keeps serving"
mkdir -p /mnt/tiny
mount -t tmpfs -o size=8m tmpfs /mnt/tiny
kvfdpd --backend file --file /mnt/tiny/img --size 32M --no-tagger --socket /tmp/full.sock --ready-file /tmp/full.ready > "$OUT/kvfdpd_full.log" 2>&1 &
FPID=$!
wait_for /tmp/full.ready 60 || { cat "$OUT/kvfdpd_full.log"; die "kvfdpd (file backend) did not become ready"; }
fdev=/dev/ublkb$(cut -d' ' -f2 /tmp/full.ready)
$T write $fdev 0 16384 --direct > /tmp/full.out 2>&1
rc=$?
cat /tmp/full.out
expect_eq "16 MiB onto 8 MiB of backing store fails" "$rc" 1
check "the writer sees ENOSPC" grep -q "No space left on device" /tmp/full.out
check "kvfdpd is still running" kill -0 $FPID
$T snap /tmp/full.sock status /tmp/full.json
check "kvfdpd counted the errors" sh -c "[ \$($T get /tmp/full.json io errors) -gt 0 ]"
check "reads still work" sh -c "head -c 1048576 $fdev | wc -c | grep -qx 1048576"
kill -TERM $FPID
check "kvfdpd (file backend) exits 0" wait $FPID
check "its device is removed" sh -c "! test -e $fdev"
umount /mnt/tiny

step "--force-remove removes a mounted device on SIGTERM (the old behaviour, on request)"
kvfdpd --backend file --file /tmp/force.img --size 32M --no-tagger --force-remove --socket /tmp/force.sock --ready-file /tmp/force.ready > "$OUT/kvfdpd_force.log" 2>&1 &
FPID=$!
wait_for /tmp/force.ready 60 || { cat "$OUT/kvfdpd_force.log"; die "kvfdpd --force-remove did not become ready"; }
fdev=/dev/ublkb$(cut -d' ' -f2 /tmp/force.ready)
mkfs.ext4 -q -F $fdev && mkdir -p /mnt/force && check "ext4 mounts on the file backend" mount $fdev /mnt/force
kill -TERM $FPID
check "the mounted device is removed" wait_until 60 sh -c "! test -e $fdev"
check "it warns that it removes a device in use" grep -qF "$fdev is in use (mounted?) but --force-remove: removing it" "$OUT/kvfdpd_force.log"
# DEL_DEV waits for the disk's last opener: kvfdpd exits once the dead filesystem is unmounted.
umount /mnt/force 2>/dev/null || umount -l /mnt/force
check "kvfdpd --force-remove exits 0 once it is unmounted" wait $FPID
rm -f /tmp/force.img

step "SIGHUP reloads the policy; a bad reload keeps the old one; a writer rule naming a missing cgroup or directory is logged and skipped"
# Lines 3 and 6: the [[writer]] headers the warnings name.
printf '[placement]\nshort = 1\n[[writer]]\nname = "ghost-cgroup"\ncgroup = "/no-such.slice/ghost.service"\n[[writer]]\nname = "ghost-dir"\ndir = "/mnt/no-such-dir"\n' > /tmp/kvfdp.toml
# A service manager's notify socket, as systemd gives a Type=notify unit.
$T notify-listen /tmp/notify.sock /tmp/notify.log &
NPID=$!
wait_for /tmp/notify.log 20 || die "the notify listener did not start"
NOTIFY_SOCKET=/tmp/notify.sock kvfdpd --device /dev/ng0n1 --config /tmp/kvfdp.toml --socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
dev=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
check "a missing writer cgroup is logged and skipped" grep -q "writer ghost-cgroup (line 3): .*/no-such.slice/ghost.service.*; skipped" "$OUT/kvfdpd.log"
check "a missing writer directory is logged and skipped" grep -q "writer ghost-dir (line 6): .*/mnt/no-such-dir.*; skipped" "$OUT/kvfdpd.log"
check "kvfdpd serves with the skipped writers" kill -0 $KPID
gen() { $T ctl $SOCK '{"cmd":"policy"}' | sed -n 's/.*"generation":\([0-9]*\).*/\1/p'; }
short_handle() { $T snap $SOCK policy /tmp/pol.json && $T get /tmp/pol.json map 2 handle; }
handle_bytes() { $T snap $SOCK ruh /tmp/r.json && $T get /tmp/r.json ruhss "$1" bytes; }
expect_eq "short starts on handle 1" "$(short_handle)" 1
check "READY=1 reached NOTIFY_SOCKET once serving" wait_until 20 grep -q "^READY=1 STATUS=serving $dev" /tmp/notify.log
kvfdpd --device /dev/ng0n1 --socket /tmp/other.sock --dev-id "${dev#/dev/ublkb}" --attach > /tmp/out 2> /tmp/err
rc=$?
echo "kvfdpd --attach to a served device: rc=$rc: $(cat /tmp/err)"
expect_eq "--attach to a served device: exit status" "$rc" 1
check "--attach to a served device: says who serves it" grep -qF "pid $KPID (kvfdpd) serves /dev/ng0n1 as $dev" /tmp/err
check "--attach to a served device: the device stays" test -b $dev

modprobe xfs 2>/dev/null
g=$(gen)
for fs in xfs ext4; do
	if [ $fs = xfs ]; then mkfs.xfs -q -f $dev; else mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $dev; fi
	mkdir -p /mnt/kv
	check "$fs mounts" mount -o discard $dev /mnt/kv || continue
	new=$((6 + ($g % 2)))   # alternate 6 / 7 so each filesystem sees a change
	# ... with a writer directory that is not there: logged and skipped, the rest applies.
	printf '[placement]\nshort = %s\n[[writer]]\nname = "ghost-%s"\ndir = "/mnt/kv/no-such-dir"\n' $new $fs > /tmp/kvfdp.toml
	kill -HUP $KPID
	check "$fs: the reload logs and skips the missing writer directory" wait_until 20 grep -q "writer ghost-$fs (line 3): .*/mnt/kv/no-such-dir.*; skipped" "$OUT/kvfdpd.log"
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

step "a reload of a config that is a directory, a FIFO or /dev/zero keeps the old policy"
cp /tmp/kvfdp.toml /tmp/kvfdp.good
g=$(gen)
sh0=$(short_handle)
for target in /tmp/cfgdir /tmp/cfgfifo /dev/zero; do
	rm -f /tmp/kvfdp.toml
	ln -s $target /tmp/kvfdp.toml
	n0=$(grep -c "not a regular file.*old policy kept" "$OUT/kvfdpd.log")
	kill -HUP $KPID
	check "-> $target: SIGHUP is refused and logged" wait_until 20 sh -c "[ \$(grep -c 'not a regular file.*old policy kept' '$OUT/kvfdpd.log') -gt $n0 ]"
	timeout 20 $T ctl $SOCK '{"cmd":"reload"}' > /tmp/rr
	check "-> $target: reload over the socket refuses it (no hang)" grep -q '"ok":false.*not a regular file.*old policy kept' /tmp/rr
	expect_eq "-> $target: generation unchanged" "$(gen)" $g
	expect_eq "-> $target: short still on handle $sh0" "$(short_handle)" $sh0
	check "-> $target: kvfdpd is still running" kill -0 $KPID
done
rm -f /tmp/kvfdp.toml
mv /tmp/kvfdp.good /tmp/kvfdp.toml

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
cat /tmp/notify.log > "$OUT/notify.log"
kill $NPID
echo "notifications:"; cat /tmp/notify.log
check "SIGHUP sent RELOADING=1 with MONOTONIC_USEC" grep -q "^RELOADING=1 MONOTONIC_USEC=[0-9]" /tmp/notify.log
check "READY=1 after each reload" sh -c "[ \$(grep -c '^READY=1' /tmp/notify.log) -ge 5 ]"
check "a refused reload says so in STATUS" grep -q "^READY=1 STATUS=.*reload refused" /tmp/notify.log
check "SIGTERM sent STOPPING=1" grep -q "^STOPPING=1" /tmp/notify.log
expect_eq "STOPPING=1 is the last message" "$(tail -n 1 /tmp/notify.log | cut -d' ' -f1)" STOPPING=1
finish
