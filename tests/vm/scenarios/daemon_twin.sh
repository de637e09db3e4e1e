#!/bin/sh
# daemon_twin: kvfdpd's live WAF twin (docs/twin.md) on the FDP SSD model through ext4: two writers of different turnover (SHORT files written and deleted, EXTREME files that stay, written side by side in 64 KiB chunks); `kvfdp stats` (text and -o json) shows the twin's projection with placement and without, "saved" above 0, the placed projection equal to the model drive's own WAF, /metrics the kvfdp_twin_* families, and `kvfdp status` no noisy handle; then a noisy handle (the EXTREME files deleted, a MEDIUM file filling the drive rewritten in place in shuffled 64 KiB chunks): `kvfdp status` (text and -o json) names the MEDIUM class's handle.
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

# kvfdp stats drains the twin's rings before it reads the twin (docs/twin.md): what it shows counts
# every write above, whenever the twin thread last ran.
step "kvfdp stats shows the twin beside the drive's WAF"
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

step "/metrics carries the twin's families"
kvfdp metrics --socket $SOCK > "$OUT/metrics.txt"
for f in kvfdp_twin_waf kvfdp_twin_saved_bytes kvfdp_twin_media_bytes_total kvfdp_twin_dropped_total; do
	check "metrics: $f" grep -q "^# TYPE $f " "$OUT/metrics.txt"
done

step "before any noisy pattern, kvfdp status names no handle"
kvfdp status --socket $SOCK > "$OUT/status0.txt"
kvfdp status --socket $SOCK -o json > "$OUT/status0.json"
check "status: no noisy-handle warning" sh -c "! grep '^warning: handle' $OUT/status0.txt"
expect_eq "status -o json: noisy_handle is null" "$($T get "$OUT/status0.json" noisy_handle)" null

# A noisy handle (docs/twin.md, Noisy handles): data that dies out of write order on a full drive.
# The EXTREME files are deleted, without a discard (nodiscard, no fstrim): the drive keeps their
# data live until ext4 writes those blocks again. A MEDIUM file takes 72 of ext4's 79 MiB free and
# is rewritten in place twice, its 64 KiB chunks in a new shuffled order each pass (O_DIRECT: each
# chunk is one write, in that order). So the drive is full but for its 15% OP, and every RU of the
# MEDIUM handle is still part live when GC needs one: GC copies about half of each pass (71.7 MiB
# of the 144 at the commit that adds this), where the EXTREME handle's stale RUs give it 4.5 MiB.
NKIB=73728
step "a noisy handle: the EXTREME files deleted, a $NKIB KiB MEDIUM file written, then rewritten in place twice in shuffled 64 KiB chunks"
check "ext4 mounts again" mount -o nodiscard $dev /mnt/kv || die "cannot mount"
check "the EXTREME files go" sh -c "rm /mnt/kv/x1 /mnt/kv/x2 /mnt/kv/y*"
check "medium write" $T write /mnt/kv/m 3 $NKIB --direct --seed 7
check "medium: 2 in-place passes in shuffled 64 KiB chunks" \
	$T write /mnt/kv/m 3 $NKIB --direct --chunk 64 --seed 7 --overwrite --shuffle --passes 2
check "the medium file holds its content" $T verify /mnt/kv/m 7
umount /mnt/kv

step "kvfdp status names the MEDIUM handle as noisy"
kvfdp stats --socket $SOCK -o json > "$OUT/stats1.json"
kvfdp stats --socket $SOCK | tee "$OUT/stats1.txt"
kvfdp status --socket $SOCK | tee "$OUT/status1.txt"
kvfdp status --socket $SOCK -o json > "$OUT/status1.json"
# The handle kvfdpd put the MEDIUM class on, from status's per-class rows.
h=
i=0
while c=$($T get "$OUT/status1.json" classes $i class); do
	[ "$c" = medium ] && h=$($T get "$OUT/status1.json" classes $i handle) && break
	i=$((i + 1))
done
[ -n "$h" ] || die "status -o json has no medium class row"
check "stats: relocations by handle" grep -q "relocated by handle" "$OUT/stats1.txt"
check "status: the warning names handle $h (medium)" grep -q "^warning: handle $h takes " "$OUT/status1.txt"
expect_eq "status -o json: noisy_handle names handle $h" "$($T get "$OUT/status1.json" noisy_handle handle)" "$h"
share=$($T get "$OUT/status1.json" noisy_handle relocated_share)
reloc=$($T get "$OUT/stats1.json" twin handles $h relocated_bytes)
echo "noisy handle $h: $reloc bytes relocated, $share of the handles' relocations"
printf '{"twin_placed": %s, "twin_none": %s, "drive": %s, "saved_bytes": %s, "noisy_handle": %s, "noisy_relocated_bytes": %s, "noisy_relocated_share": %s}\n' \
	$pw $nw $dw $saved $h $reloc $share > "$OUT/result.json"

kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
finish
