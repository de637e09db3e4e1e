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
check "dd writes 8 MiB with O_DIRECT" dd if=/dev/urandom of=/dev/ublkb0 bs=128k count=64 oflag=direct

step "kvfdp against the daemon"
# run_cli NAME ARGS...: kvfdp ARGS into $OUT/NAME.txt (shown), its exit code checked
run_cli() {
	_n=$1; shift
	kvfdp "$@" > "$OUT/$_n.txt" 2>&1; _rc=$?
	cat "$OUT/$_n.txt"
	expect_eq "kvfdp $* exits 0" "$_rc" 0
}
# has FILE DESC ERE: records a failure unless a line of FILE matches ERE
has() { check "$2" grep -qE -- "$3" "$1"; }
run_cli status status --socket $SOCK --width 100
run_cli ruh ruh --socket $SOCK --width 100
run_cli stats stats --socket $SOCK --width 100
# what the README's daemon session shows: 8 MiB of unhinted O_DIRECT writes, all not_set on handle 0
S=$OUT/status.txt R=$OUT/ruh.txt T=$OUT/stats.txt
has $S "status: the daemon answers with its pid" '^daemon: +kvfdpd [^,]+, pid [0-9]+, up [0-9]+ s'
has $S "status: ublkb0 serves ng0n1 by passthrough" '^device: +/dev/ublkb0 -> /dev/ng0n1 \(passthru\), nsid 1, 1\.00 GiB, LBA 4096 B$'
has $S "status: FDP with $KVFDP_NRUH handles" "^fdp: +enabled, $KVFDP_NRUH handles, 1 reclaim group\\(s\\), RU 1\\.00 MiB$"
has $S "status: tagging active" '^tagging: +active, sources '
has $S "status: no stale tags" '^stale tags: +0$'
has $S "status: 8 MiB written" '^io: +since start, [0-9]+ writes \(8\.00 MiB\)'
has $S "status: no I/O errors" '^ +0 errors(,|$)'
has $S "status: all 8 MiB under not_set on handle 0" '^not_set +0 +[0-9]+ +8\.00 MiB$'
for c in short medium long extreme; do
	has $S "status: nothing under $c" "^$c +[0-9]+ +0 +0 B\$"
done
has $R "ruh: $KVFDP_NRUH handles via the daemon" "^/dev/ng0n1 \\(passthru, via daemon\\): $KVFDP_NRUH placement handles, LBA 4096 B$"
expect_eq "ruh: one row per handle" "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ ' $R)" "$KVFDP_NRUH"
has $R "ruh: handle 0 wrote 8 MiB" '^ +0 +0 +0 +not_set,none +[0-9]+ .* 8\.00 MiB$'
has $T "stats: the emulated drive is named" '^device: +/dev/ng0n1 \(emulated: QEMU\)$'
has $T "stats: HBMW counts the 8 MiB" '^hbmw: +[0-9]+ B'
hbmw=$(sed -n 's/^hbmw: *\([0-9]*\) B.*/\1/p' $T)
expect_ge "stats: HBMW >= 8 MiB" "${hbmw:-0}" 8388608
has $T "stats: no WAF claimed on QEMU" '^waf: +n/a'
has $T "stats: the emulation caveat" '^note: emulated drive \(QEMU\)'
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
check "metrics --textfile exits 0" kvfdp metrics --socket $SOCK --textfile /tmp/kvfdp.prom
check "textfile written" grep -q '^kvfdp_daemon_up 1$' /tmp/kvfdp.prom
kvfdp ruh --socket $SOCK -o json > /tmp/ruh.json; rc=$?
expect_eq "kvfdp ruh -o json exits 0" "$rc" 0
expect_eq "kvfdpd reports the 8 MiB on handle 0" "$(json_num bytes_written /tmp/ruh.json)" 8388608

step "stop kvfdpd"
kill -TERM $KPID; wait $KPID; rc=$?
expect_eq "kvfdpd exits 0 on SIGTERM" "$rc" 0
kvfdp metrics --socket $SOCK > /tmp/down.prom; rc=$?
expect_eq "metrics without the daemon exits 3" "$rc" 3
check "metrics without the daemon says so" grep -q '^kvfdp_daemon_up 0$' /tmp/down.prom
finish
