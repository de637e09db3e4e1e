#!/bin/sh
# daemon_http_metrics: kvfdpd --metrics-listen on the FDP namespace: GET /metrics over loopback (busybox wget) has the same families as `kvfdp metrics`; garbage and a client that never finishes its request leave it serving; a second kvfdpd on the same port is refused with one line and makes no device. The scrape comes back in $OUT for the dashboard check (daemon_http_metrics.check).
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 300
. /lib/kvfdp/vm-lib.sh
need kvfdp kvfdpd wget nc ip
need_ublk

# The guest's init leaves the loopback interface down.
check "loopback up" ip link set lo up
SOCK=/tmp/kvfdpd.sock
URL=http://127.0.0.1:9477/metrics
step "start kvfdpd with --metrics-listen 127.0.0.1:9477 (learned placement, so the learner's families are there)"
kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready --metrics-listen 127.0.0.1:9477 \
	--placement learned --learn-state "" > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
check "kvfdpd logs where it serves the metrics" grep -q 'metrics: http://127.0.0.1:9477/metrics' "$OUT/kvfdpd.log"

step "write through the disk, then scrape"
check "dd writes 8 MiB with O_DIRECT" dd if=/dev/urandom of=/dev/ublkb0 bs=128k count=64 oflag=direct
check "GET /metrics answers" wget -q -O "$OUT/metrics.prom" $URL
for f in kvfdp_daemon_up kvfdp_class_bytes_total kvfdp_handle_bytes_total kvfdp_ruh_ruamw_bytes \
	kvfdp_fdp_hbmw_bytes kvfdp_fdp_mbmw_bytes kvfdp_stale_tags_total kvfdp_io_errors_total \
	kvfdp_start_time_seconds kvfdp_learned_lifetime_seconds; do
	check "scrape has $f" grep -q "^# TYPE $f " "$OUT/metrics.prom"
done
check "scrape: the 8 MiB counted" grep -qE '^kvfdp_io_bytes_total\{op="write"\} [0-9]{7,}' "$OUT/metrics.prom"
check "kvfdp metrics exits 0" kvfdp metrics --socket $SOCK > "$OUT/cli.prom"
grep '^# TYPE ' "$OUT/metrics.prom" | sort > /tmp/http.families
grep '^# TYPE ' "$OUT/cli.prom" | sort > /tmp/cli.families
check "kvfdp metrics and /metrics have the same families" cmp /tmp/http.families /tmp/cli.families
expect_ge "families in the scrape" "$(wc -l < /tmp/http.families)" 20

step "bad clients"
printf 'garbage\r\n\r\n' | nc 127.0.0.1 9477 > "$OUT/garbage.txt"
check "garbage gets 400" grep -q '^HTTP/1.1 400 ' "$OUT/garbage.txt"
printf 'POST /metrics HTTP/1.1\r\n\r\n' | nc 127.0.0.1 9477 > "$OUT/post.txt"
check "POST gets 405" grep -q '^HTTP/1.1 405 ' "$OUT/post.txt"
# A client that sends half a request and then nothing: its stdin is a FIFO this shell holds open.
mkfifo /tmp/hold
nc 127.0.0.1 9477 < /tmp/hold > /dev/null &
STALL=$!
exec 3> /tmp/hold
printf 'GET /metr' >&3
check "a scrape while a client stalls" wget -q -O /tmp/m2.prom $URL
check "that scrape is whole" grep -q '^kvfdp_daemon_up 1$' /tmp/m2.prom

step "a second kvfdpd on the same port is refused before any device"
kvfdpd --backend model --file /tmp/m.img --size 64M --no-tagger --socket /tmp/k2.sock \
	--metrics-listen 127.0.0.1:9477 > /tmp/k2.out 2> /tmp/k2.err; rc=$?
cat /tmp/k2.err
expect_eq "second kvfdpd exits 1" "$rc" 1
expect_eq "one line on stderr" "$(wc -l < /tmp/k2.err)" 1
check "it says the address is in use" grep -q '127.0.0.1:9477: address already in use' /tmp/k2.err
check "no model file made" test ! -e /tmp/m.img
check "no second ublk disk" test ! -e /dev/ublkb1

step "stop"
exec 3>&-
kill $STALL 2>/dev/null
kill -TERM $KPID; wait $KPID; rc=$?
expect_eq "kvfdpd exits 0 on SIGTERM" "$rc" 0
finish
