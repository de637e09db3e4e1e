#!/bin/sh
# daemon_http_metrics_load (bench): fio random writes through kvfdpd for SECS seconds, alternating rounds without and with 100 concurrent GET /metrics loops plus garbage requests, the scrapers at nice 0 and then at nice 19 (so that fio and kvfdpd get the CPUs first: what is left of the drop is kvfdpd's own cost of serving them, not the scraper processes'); reports fio's bandwidth per round and kvfdpd's RSS before, between and after (figures, no timing assertions: under TCG the scrapers share the guest's 2 vCPUs with fio).
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 600
. /lib/kvfdp/vm-lib.sh
need kvfdp kvfdpd wget nc ip fio renice
need_ublk
check "loopback up" ip link set lo up
SECS=${KVFDP_LOAD_SECS:-20}
URL=http://127.0.0.1:9477/metrics
kvfdpd --device /dev/ng0n1 --socket /tmp/kvfdpd.sock --ready-file /tmp/kvfdpd.ready \
	--metrics-listen 127.0.0.1:9477 > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
rss() { awk '/^VmRSS:/ {print $2}' /proc/$KPID/status; }
# fio_round NAME: SECS of 4k random writes at depth 32 through /dev/ublkb0; prints KiB/s
fio_round() {
	fio --name="$1" --filename=/dev/ublkb0 --direct=1 --ioengine=io_uring --rw=randwrite --bs=4k \
		--iodepth=32 --size=256M --time_based --runtime="$SECS" --output-format=terse \
		--output="$OUT/fio-$1.terse" > /dev/null 2>&1 || return 1
	# terse v3: field 48 is the write bandwidth in KiB/s
	cut -d';' -f48 "$OUT/fio-$1.terse"
}
# scrapers N NICE: N loops of GET /metrics, and one of garbage, at niceness NICE (busybox has
# renice, not nice), until /tmp/stop-scrapers exists
scrapers() {
	rm -f /tmp/stop-scrapers /tmp/scrape-ok /tmp/scrape-fail
	_i=0
	while [ $_i -lt "$1" ]; do
		sh -c "renice -n $2 -p \$\$ > /dev/null; while [ ! -e /tmp/stop-scrapers ]; do
			if wget -q -O /dev/null $URL; then echo >> /tmp/scrape-ok; else echo >> /tmp/scrape-fail; fi
		done" &
		_i=$((_i + 1))
	done
	sh -c "renice -n $2 -p \$\$ > /dev/null; while [ ! -e /tmp/stop-scrapers ]; do printf 'garbage\r\n\r\n' | nc 127.0.0.1 9477 > /dev/null; done" &
}
rss0=$(rss)
echo "kvfdpd RSS at start: $rss0 kB"
for r in 1 2; do
	step "round $r: fio alone"
	bw=$(fio_round "alone-$r") || die "fio failed"
	echo "round $r alone: $bw KiB/s"
	echo "alone-$r $bw" >> "$OUT/bw.txt"
	for n in 0 19; do
		step "round $r: fio with 100 scrapers and garbage at nice $n"
		scrapers 100 $n
		bw=$(fio_round "scraped-nice$n-$r") || die "fio failed"
		rss_load=$(rss)
		touch /tmp/stop-scrapers
		wait_until 60 sh -c "! pgrep -f 'stop-scrapers' > /dev/null" || true
		ok=$(wc -l < /tmp/scrape-ok 2>/dev/null || echo 0) fail=$(wc -l < /tmp/scrape-fail 2>/dev/null || echo 0)
		echo "round $r scraped (nice $n): $bw KiB/s; scrapes ok $ok, failed $fail; kvfdpd RSS under load $rss_load kB"
		echo "scraped-nice$n-$r $bw ok=$ok failed=$fail rss_load=$rss_load" >> "$OUT/bw.txt"
		expect_ge "round $r, nice $n: scrapes answered" "$ok" 1
		echo "kvfdpd RSS after round $r, nice $n: $(rss) kB" | tee -a "$OUT/bw.txt"
	done
done
check "kvfdpd still answers" wget -q -O "$OUT/metrics.prom" $URL
check "no I/O errors" grep -q '^kvfdp_io_errors_total 0$' "$OUT/metrics.prom"
kill -TERM $KPID; wait $KPID; rc=$?
expect_eq "kvfdpd exits 0 on SIGTERM" "$rc" 0
cat "$OUT/bw.txt"
finish
