#!/bin/sh
# daemon_model: kvfdpd on the FDP SSD model (--backend model, no FDP drive): hinted files land on their class's handle (RUAMW vs kvfdpd counters); churn beyond the capacity makes the model garbage-collect, `kvfdp stats` reports the projected WAF, and it is no higher with the tagger than without; ext4.
# vm-args: --lba 4096 --nruh 8 --timeout 240
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock
SIZE_MIB=96

# The class -> handle map, written as the config and expected by the placement check: the
# built-in one, stated (the published WAF figures were measured with it).
MAP="not_set=0 none=0 short=1 medium=2 long=3 extreme=4"
{ echo '[placement]'; for m in $MAP; do echo "${m%=*} = ${m#*=}"; done; } > /tmp/kvfdp.toml
HANDLES=; for m in $MAP; do HANDLES="$HANDLES --handle $m"; done

# One pass: a fresh model, ext4, hinted files, then churn (SHORT files written and deleted around
# EXTREME files that stay). $1: "tagged" or "untagged" (kvfdpd --no-tagger: all on handle 0).
run_pass() {
	mode=$1
	extra=; [ $mode = untagged ] && extra=--no-tagger
	step "$mode: kvfdpd on the model ($SIZE_MIB MiB, 1 MiB reclaim units, 15% OP: the least that leaves 8 open units and the GC reserve)"
	rm -f /tmp/model.img /tmp/kvfdpd.ready
	kvfdpd --backend model --file /tmp/model.img --size ${SIZE_MIB}M --ru-size 1M --nruh 8 --op 0.15 $extra --config /tmp/kvfdp.toml \
		--socket $SOCK --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd_$mode.log" 2>&1 &
	KPID=$!
	wait_until 60 sh -c "test -e /tmp/kvfdpd.ready || ! kill -0 $KPID"
	test -e /tmp/kvfdpd.ready || { cat "$OUT/kvfdpd_$mode.log"; die "kvfdpd did not become ready"; }
	dev=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
	check "$mode: $dev is a block device" test -b $dev
	expect_eq "$mode: capacity is the model's" "$(($(cat /sys/block/${dev#/dev/}/size) * 512))" $((SIZE_MIB << 20))

	# No discard, so the model keeps deleted data until the filesystem overwrites it.
	mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 $dev
	mkdir -p /mnt/kv
	check "$mode: ext4 mounts" mount -o nodiscard $dev /mnt/kv || die "cannot mount"
	$T snap $SOCK ruh /tmp/ruh0.json
	$T snap $SOCK status /tmp/st0.json
	check "$mode: buffered 4100 KiB LONG file" $T write /mnt/kv/long 4 4100 --seed 1
	check "$mode: O_DIRECT 3076 KiB SHORT file" $T write /mnt/kv/short 2 3076 --direct --seed 2
	sync
	if [ $mode = tagged ]; then
		check "placement on the model matches" $T placement $SOCK /tmp/ruh0.json /tmp/st0.json long=4100 short=3076 $HANDLES
	fi

	step "$mode: churn: 8 rounds of 2 x 14000 KiB SHORT files, deleted, beside 36 MiB of EXTREME files; each round one 1300 KiB EXTREME file is written alongside, so unplaced units mix lifetimes"
	for i in 1 2 3; do check "$mode: extreme $i" $T write /mnt/kv/x$i 5 12288 --direct --seed $((10 + i)); done
	r=1
	while [ $r -le 8 ]; do
		$T write /mnt/kv/y$r 5 1300 --direct --chunk 64 --seed $((100 * r + 3)) &
		ypid=$!
		$T write /mnt/kv/s1 2 14000 --direct --chunk 64 --seed $((100 * r + 1)) || die "churn write failed"
		wait $ypid || die "extreme write failed"
		$T write /mnt/kv/s2 2 14000 --direct --seed $((100 * r + 2)) || die "churn write failed"
		sync
		rm /mnt/kv/s1 /mnt/kv/s2
		r=$((r + 1))
	done
	(cd /mnt/kv && md5sum long short x* y* > /tmp/sums)
	sync
	kvfdp stats --socket $SOCK -o json > "$OUT/stats_$mode.json"
	kvfdp stats --socket $SOCK | tee "$OUT/stats_$mode.txt"
	kvfdp ruh --socket $SOCK | tee "$OUT/ruh_$mode.txt"
	hbmw=$(json_num hbmw "$OUT/stats_$mode.json")
	mbmw=$(json_num mbmw "$OUT/stats_$mode.json")
	mbe=$(json_num mbe "$OUT/stats_$mode.json")
	echo "$mode: hbmw $hbmw mbmw $mbmw mbe $mbe"
	# About 270 MiB written to a 96 MiB namespace: the model erased at least its size.
	expect_ge "$mode: host bytes cover the churn" "$hbmw" $((8 * 2 * 14000 << 10))
	expect_ge "$mode: the model erased reclaim units" "$mbe" $((SIZE_MIB << 20))
	expect_ge "$mode: media bytes >= host bytes" "$mbmw" "$hbmw"
	check "$mode: stats prints a WAF" grep -q '"waf": [1-9]' "$OUT/stats_$mode.json"
	umount /mnt/kv
	check "$mode: remounts" mount -o nodiscard $dev /mnt/kv
	check "$mode: checksums survive the garbage collection and a remount" sh -c 'cd /mnt/kv && md5sum -c /tmp/sums'
	umount /mnt/kv
	check "$mode: fsck is clean" e2fsck -fn $dev
	kill -TERM $KPID
	check "$mode: kvfdpd exits 0" wait $KPID
	# media and host bytes, for the comparison (WAF = mbmw / hbmw)
	eval "${mode}_mbmw=$mbmw ${mode}_hbmw=$hbmw"
}

run_pass tagged
run_pass untagged
step "placement lowers the projected WAF"
waf_t=$(awk "BEGIN { printf \"%.4f\", $tagged_mbmw / $tagged_hbmw }")
waf_u=$(awk "BEGIN { printf \"%.4f\", $untagged_mbmw / $untagged_hbmw }")
echo "WAF tagged $waf_t, untagged $waf_u"
printf '{"waf_tagged": %s, "waf_untagged": %s}\n' $waf_t $waf_u > "$OUT/result.json"
check "tagged WAF $waf_t <= untagged WAF $waf_u" awk "BEGIN { exit !($waf_t <= $waf_u) }"
finish
