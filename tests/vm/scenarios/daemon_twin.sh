#!/bin/sh
# daemon_twin: kvfdpd's live WAF twin (docs/twin.md) on the FDP SSD model through ext4: two writers of different turnover (SHORT files written and deleted, EXTREME files that stay, written side by side in 64 KiB chunks); `kvfdp stats` (text and -o json) shows the twin's projection with placement and without, "saved" above 0, the placed projection equal to the model drive's own WAF, and /metrics the kvfdp_twin_* families.
# vm-args: --lba 4096 --nruh 8 --timeout 240
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock
SIZE_MIB=96

step "kvfdpd on the model ($SIZE_MIB MiB, 1 MiB reclaim units, 15% OP), the twin at its default bound"
rm -f /tmp/model.img /tmp/kvfdpd.ready
kvfdpd --backend model --file /tmp/model.img --size ${SIZE_MIB}M --ru-size 1M --nruh 8 --op 0.15 \
	--debug 32 --socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_until 60 sh -c "test -e /tmp/kvfdpd.ready || ! kill -0 $KPID"
test -e /tmp/kvfdpd.ready || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
dev=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
check "the twin's plan is logged (--debug 32, model)" grep -q "twin: rate 1.000000 of $SIZE_MIB MiB" "$OUT/kvfdpd.log"
mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 $dev
mkdir -p /mnt/kv
check "ext4 mounts" mount -o nodiscard $dev /mnt/kv || die "cannot mount"

step "two writers: 10 rounds of 2 x 8000 KiB SHORT files, deleted, each written side by side with a 1500 KiB EXTREME file that stays (64 KiB chunks), beside 24 MiB of EXTREME files"
for i in 1 2; do check "extreme $i" $T write /mnt/kv/x$i 5 12288 --direct --seed $((10 + i)); done
r=1
while [ $r -le 10 ]; do
	for k in 1 2; do
		$T write /mnt/kv/y$r.$k 5 1500 --direct --chunk 64 --seed $((100 * r + 10 + k)) &
		ypid=$!
		$T write /mnt/kv/s$k 2 8000 --direct --chunk 64 --seed $((100 * r + k)) || die "churn write failed"
		wait $ypid || die "extreme write failed"
	done
	sync
	rm /mnt/kv/s1 /mnt/kv/s2
	r=$((r + 1))
done
sync
umount /mnt/kv

step "kvfdp stats shows the twin beside the drive's WAF"
# The twin thread drains its rings every millisecond: wait until it has applied them (records stop moving).
wait_until 30 sh -c "n=\$(kvfdp stats --socket $SOCK -o json | tr -d ' \n' | sed -n 's/.*\"records\":\([0-9]*\).*/\1/p'); \
	test \"\$n\" = \"\$(cat /tmp/twin_records 2>/dev/null)\" && test -n \"\$n\"; r=\$?; echo \"\$n\" > /tmp/twin_records; exit \$r"
kvfdp stats --socket $SOCK -o json > "$OUT/stats.json"
kvfdp stats --socket $SOCK | tee "$OUT/stats.txt"
check "text: waf with placement" grep -q "waf with placement" "$OUT/stats.txt"
check "text: waf without (none)" grep -q "waf without (none)" "$OUT/stats.txt"
check "text: saved by placement" grep -q "saved by placement" "$OUT/stats.txt"
saved=$(json_num saved_bytes "$OUT/stats.json")
dropped=$(json_num dropped "$OUT/stats.json")
expect_ge "saved by placement is above 0" "$saved" 1
expect_eq "no twin record dropped" "$dropped" 0
pw=$(tr -d ' \n' < "$OUT/stats.json" | sed -n 's/.*"placed":{[^}]*"waf":\([0-9.e+-]*\).*/\1/p')
nw=$(tr -d ' \n' < "$OUT/stats.json" | sed -n 's/.*"none":{[^}]*"waf":\([0-9.e+-]*\).*/\1/p')
hbmw=$(json_num hbmw "$OUT/stats.json")
mbmw=$(json_num mbmw "$OUT/stats.json")
dw=$(awk "BEGIN { printf \"%.6f\", $mbmw / $hbmw }")
echo "twin placed $pw none $nw; the model drive's own WAF $dw"
check "placed projection $pw <= none $nw" awk "BEGIN { exit !($pw <= $nw) }"
check "placed projection $pw is the model drive's WAF $dw (rate 1: the same model, the same writes)" \
	awk "BEGIN { d = $pw - $dw; if (d < 0) d = -d; exit !(d < 0.002) }"
printf '{"twin_placed": %s, "twin_none": %s, "drive": %s, "saved_bytes": %s}\n' $pw $nw $dw $saved > "$OUT/result.json"

step "/metrics carries the twin's families"
kvfdp metrics --socket $SOCK > "$OUT/metrics.txt"
for f in kvfdp_twin_waf kvfdp_twin_saved_bytes kvfdp_twin_media_bytes_total kvfdp_twin_dropped_total; do
	check "metrics: $f" grep -q "^# TYPE $f " "$OUT/metrics.txt"
done
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
finish
