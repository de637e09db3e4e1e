#!/bin/sh
# daemon_fio: fio, the same short jobs on kvfdpd's /dev/ublkbN and on the raw FDP namespace /dev/nvme0n1, and where the kernel gives kvfdpd zero copy (6.16+) also on a copy-mode kvfdpd (--no-zero-copy); writes the throughput and latency ratios to $OUT/fio-ratio.json (TCG figures: not hardware figures).
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 420
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool fio
T=kvfdp-daemon-vmtool
# Short rounds; in each round every target runs both jobs back to back, the targets' order
# rotating between rounds, so that load on the host moves all sides of a round alike. The
# ratios reported are medians over the rounds of the per-round ratios.
ROUNDS=5
SECS=2
AREA=256M   # every target writes the same preconditioned first 256 MiB of the namespace
SOCK=/tmp/kvfdpd.sock   # kvfdpd_start's

step "which data path does kvfdpd choose here?"
kvfdpd_start
$T snap $SOCK status /tmp/status-probe.json
MODE=$($T get /tmp/status-probe.json data_path mode)
echo "kvfdpd's default data path: $MODE ($($T get /tmp/status-probe.json data_path note))"
kvfdpd_stop probe
# targets: raw, kvfdpd as it chooses ("ublk"), and with zero copy also kvfdpd in copy mode
TARGETS="raw ublk"
[ "$MODE" = zero-copy ] && TARGETS="raw ublk copy"

# Write the area once, so no target pays QEMU's first allocation of the sparse image.
step "precondition $AREA of /dev/nvme0n1"
check "fill" fio --name=fill --filename=/dev/nvme0n1 --rw=write --bs=1M --size=$AREA --direct=1 \
	--ioengine=io_uring --iodepth=8 --output=/dev/null

# run_job NAME TARGET-LABEL DEV: fio's JSON to $OUT/fio-NAME-LABEL.json.
run_job() {
	name=$1 label=$2 dev=$3
	case $name in
	seq128k-*) args="--rw=write --bs=128k --iodepth=16" ;;
	*) args="--rw=randwrite --bs=4k --iodepth=32" ;;
	esac
	# shellcheck disable=SC2086
	check "fio $name on $label ($dev)" fio --name="$name" --filename="$dev" --direct=1 --ioengine=io_uring \
		--size=$AREA --time_based --runtime="$SECS" --ramp_time=500ms --output-format=json \
		--output="$OUT/fio-$name-$label.json" $args
}
# median: the middle of the numbers on stdin (the lower middle for an even count).
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# rotate N WORDS...: the words rotated left by N.
rotate() {
	n=$1
	shift
	i=0
	while [ $i -lt $((n % $#)) ]; do
		first=$1
		shift
		set -- "$@" "$first"
		i=$((i + 1))
	done
	echo "$@"
}

r=1
while [ $r -le $ROUNDS ]; do
	order=$(rotate $((r - 1)) $TARGETS)
	step "round $r of $ROUNDS: $order"
	for t in $order; do
		case $t in
		raw) dev=/dev/nvme0n1 ;;
		ublk) kvfdpd_start; dev=$UB ;;
		copy) kvfdpd_start --no-zero-copy; dev=$UB ;;
		esac
		run_job seq128k-$r $t "$dev"
		run_job rand4k-$r $t "$dev"
		[ $t = raw ] || kvfdpd_stop "$t-$r"
	done
	r=$((r + 1))
done
if [ "$MODE" = zero-copy ]; then
	expect_eq "the copy target ran in copy mode" "$($T get "$OUT/status-copy-1.json" data_path mode)" copy
	expect_eq "copy mode copied bytes" "$([ "$($T get "$OUT/status-copy-1.json" io copied_bytes)" -gt 0 ] && echo yes)" yes
	expect_eq "zero copy copied none" "$($T get "$OUT/status-ublk-1.json" io copied_bytes)" 0
fi

body=""
for job in seq128k rand4k; do
	# Per round: raw bw iops lat, ublk bw iops lat[, copy bw iops lat].
	: > /tmp/$job.rounds
	r=1
	while [ $r -le $ROUNDS ]; do
		line=""
		for t in $TARGETS; do
			s=$(fio_write_stat "$OUT/fio-$job-$r-$t.json")
			[ "$(echo $s | wc -w)" = 3 ] || die "$job round $r: no write figures in $OUT/fio-$job-$r-$t.json"
			line="$line $s"
		done
		# shellcheck disable=SC2086
		set -- $line
		expect_ge "$job round $r: fio wrote through kvfdpd (KiB/s)" "${4%.*}" 1
		echo "$line" >> /tmp/$job.rounds
		r=$((r + 1))
	done
	cat /tmp/$job.rounds
	bw=$(awk '$1 > 0 { print $4 / $1 }' /tmp/$job.rounds | median)
	iops=$(awk '$2 > 0 { print $5 / $2 }' /tmp/$job.rounds | median)
	lat=$(awk '$3 > 0 { print $6 / $3 }' /tmp/$job.rounds | median)
	raw_bw=$(awk '{ print $1 }' /tmp/$job.rounds | median)
	ublk_bw=$(awk '{ print $4 }' /tmp/$job.rounds | median)
	rounds=$(awk '$1 > 0 { printf "%s%.3f", (NR > 1 ? "," : ""), $4 / $1 }' /tmp/$job.rounds)
	entry=$(printf '"bw_ratio":%.3f,"iops_ratio":%.3f,"lat_ratio":%.3f,"raw_bw_kib":%s,"ublk_bw_kib":%s,"bw_ratio_rounds":[%s]' \
		"$bw" "$iops" "$lat" "$raw_bw" "$ublk_bw" "$rounds")
	if [ "$MODE" = zero-copy ]; then
		cbw=$(awk '$1 > 0 { print $7 / $1 }' /tmp/$job.rounds | median)
		ciops=$(awk '$2 > 0 { print $8 / $2 }' /tmp/$job.rounds | median)
		clat=$(awk '$3 > 0 { print $9 / $3 }' /tmp/$job.rounds | median)
		copy_bw=$(awk '{ print $7 }' /tmp/$job.rounds | median)
		zc_copy=$(awk '$7 > 0 { print $4 / $7 }' /tmp/$job.rounds | median)
		crounds=$(awk '$1 > 0 { printf "%s%.3f", (NR > 1 ? "," : ""), $7 / $1 }' /tmp/$job.rounds)
		entry="$entry$(printf ',"copy_bw_ratio":%.3f,"copy_iops_ratio":%.3f,"copy_lat_ratio":%.3f,"copy_bw_kib":%s,"copy_bw_ratio_rounds":[%s],"zero_copy_over_copy_bw":%.3f' \
			"$cbw" "$ciops" "$clat" "$copy_bw" "$crounds" "$zc_copy")"
	fi
	body="$body${body:+,}\"$job\":{$entry}"
done

step "ratios (kvfdpd / raw, medians of $ROUNDS rounds)"
printf '{"scenario":"daemon_fio","kernel":"%s","accel":"tcg","note":"QEMU TCG guest: emulated CPU and NVMe, not hardware figures","data_path":"%s","targets":"%s","rounds":%s,"runtime_s":%s,"jobs":{%s}}\n' \
	"$(uname -r)" "$MODE" "$TARGETS" "$ROUNDS" "$SECS" "$body" > "$OUT/fio-ratio.json"
cat "$OUT/fio-ratio.json"
finish
