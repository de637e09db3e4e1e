#!/bin/sh
# cli_metrics: `kvfdp metrics`, `status`, `ruh` and `stats` against a running kvfdpd on the FDP namespace (the daemon path of the CLI, for real).
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 240
. /lib/kvfdp/vm-lib.sh
need kvfdp kvfdpd

SOCK=/tmp/kvfdpd.sock
step "start kvfdpd on /dev/ng0n1"
kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }

step "write through the ublk device"
dd if=/dev/urandom of=/dev/ublkb0 bs=128k count=64 oflag=direct 2>&1

step "kvfdp against the daemon"
kvfdp status --socket $SOCK --width 100 | tee "$OUT/status.txt"
kvfdp ruh --socket $SOCK --width 100 | tee "$OUT/ruh.txt"
kvfdp stats --socket $SOCK --width 100 | tee "$OUT/stats.txt"
kvfdp metrics --socket $SOCK > "$OUT/metrics.prom"; rc=$?
cat "$OUT/metrics.prom"
expect_eq "metrics exit code" "$rc" 0
check "metrics: daemon up" grep -q '^kvfdp_daemon_up 1$' "$OUT/metrics.prom"
check "metrics: class bytes" grep -q '^kvfdp_class_bytes_total{class="not_set"}' "$OUT/metrics.prom"
check "metrics: stale tags" grep -q '^kvfdp_stale_tags_total' "$OUT/metrics.prom"
check "metrics: RUAMW per handle" grep -q '^kvfdp_ruh_ruamw_lbas{handle="0",pid="0",ruhid="0"}' "$OUT/metrics.prom"
check "metrics: hbmw" grep -q '^kvfdp_fdp_hbmw_bytes [1-9]' "$OUT/metrics.prom"
n=$(grep -c '^# TYPE kvfdp_class_bytes_total ' "$OUT/metrics.prom")
expect_eq "no duplicate families" "$n" 1
kvfdp metrics --socket $SOCK --textfile /tmp/kvfdp.prom
check "textfile written" grep -q '^kvfdp_daemon_up 1$' /tmp/kvfdp.prom
wb=$(json_num bytes_written "$(kvfdp ruh --socket $SOCK -o json > /tmp/ruh.json; echo /tmp/ruh.json)")
check "kvfdpd reports bytes on handle 0" test "${wb:-0}" -ge 8388608

step "stop kvfdpd"
kill -TERM $KPID; wait $KPID
kvfdp metrics --socket $SOCK > /tmp/down.prom; rc=$?
expect_eq "metrics without the daemon exits 3" "$rc" 3
check "metrics without the daemon says so" grep -q '^kvfdp_daemon_up 0$' /tmp/down.prom
finish
