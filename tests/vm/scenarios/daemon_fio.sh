#!/bin/sh
# daemon_fio: fio, the same short jobs on kvfdpd's /dev/ublkbN and on the raw FDP namespace /dev/nvme0n1; writes the throughput and latency ratios to $OUT/fio-ratio.json (TCG figures: not hardware figures).
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 300
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool fio
# Short rounds, raw and ublk back to back (order alternating), so that load on the host moves
# both sides of a pair alike; the ratio reported is the median over the rounds.
ROUNDS=5
SECS=2
AREA=256M   # both targets write the same preconditioned first 256 MiB of the namespace

step "start kvfdpd on /dev/ng0n1"
kvfdpd --device /dev/ng0n1 --socket /tmp/kvfdpd.sock --ready-file /tmp/kvfdpd.ready > "$OUT/kvfdpd.log" 2>&1 &
KPID=$!
wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd did not become ready"; }
UB=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
check "$UB is a block device" test -b "$UB" || die "no ublk device"

# Write the area once, so neither target pays QEMU's first allocation of the sparse image.
step "precondition $AREA of /dev/nvme0n1"
check "fill" fio --name=fill --filename=/dev/nvme0n1 --rw=write --bs=1M --size=$AREA --direct=1 \
	--ioengine=io_uring --iodepth=8 --output=/dev/null

# run_job NAME TARGET-LABEL DEV FIO-ARGS...: fio's JSON to $OUT/fio-NAME-LABEL.json.
run_job() {
	name=$1 label=$2 dev=$3
	shift 3
	check "fio $name on $label ($dev)" fio --name="$name" --filename="$dev" --direct=1 --ioengine=io_uring \
		--size=$AREA --time_based --runtime="$SECS" --ramp_time=500ms --output-format=json \
		--output="$OUT/fio-$name-$label.json" "$@"
}
# write_stat FILE: "bw_kib iops lat_mean_ns" of the job's write side.
write_stat() {
	awk '/"write" : \{/ { w = 1 }
	     w && /"bw" :/ { gsub(/[ ,]/, ""); split($0, a, ":"); bw = a[2] }
	     w && /"iops" :/ { gsub(/[ ,]/, ""); split($0, a, ":"); iops = a[2] }
	     w && /"lat_ns" : \{/ { l = 1 }
	     w && l && /"mean" :/ { gsub(/[ ,]/, ""); split($0, a, ":"); print bw, iops, a[2]; exit }' "$1"
}

# median: the middle of the numbers on stdin (the lower middle for an even count).
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

body=""
for job in seq128k rand4k; do
	step "$job: $ROUNDS rounds of raw namespace and kvfdpd"
	if [ $job = seq128k ]; then args="--rw=write --bs=128k --iodepth=16"; else args="--rw=randwrite --bs=4k --iodepth=32"; fi
	: > /tmp/$job.rounds
	r=1
	while [ $r -le $ROUNDS ]; do
		# shellcheck disable=SC2086
		if [ $((r % 2)) = 1 ]; then
			run_job $job-$r raw /dev/nvme0n1 $args
			run_job $job-$r ublk "$UB" $args
		else
			run_job $job-$r ublk "$UB" $args
			run_job $job-$r raw /dev/nvme0n1 $args
		fi
		# shellcheck disable=SC2046
		set -- $(write_stat "$OUT/fio-$job-$r-raw.json") $(write_stat "$OUT/fio-$job-$r-ublk.json")
		[ $# -eq 6 ] || die "$job round $r: no write figures in fio's JSON ($OUT/fio-$job-$r-*.json)"
		expect_ge "$job round $r: fio wrote through kvfdpd (KiB/s)" "${4%.*}" 1
		echo "$*" >> /tmp/$job.rounds
		r=$((r + 1))
	done
	cat /tmp/$job.rounds
	# Per round: raw bw, iops, lat, ublk bw, iops, lat; the ratios are medians of the rounds.
	bw=$(awk '$1 > 0 { print $4 / $1 }' /tmp/$job.rounds | median)
	iops=$(awk '$2 > 0 { print $5 / $2 }' /tmp/$job.rounds | median)
	lat=$(awk '$3 > 0 { print $6 / $3 }' /tmp/$job.rounds | median)
	raw_bw=$(awk '{ print $1 }' /tmp/$job.rounds | median)
	ublk_bw=$(awk '{ print $4 }' /tmp/$job.rounds | median)
	rounds=$(awk '$1 > 0 && $3 > 0 { printf "%s%.3f", (NR > 1 ? "," : ""), $4 / $1 }' /tmp/$job.rounds)
	body="$body${body:+,}$(printf '"%s":{"bw_ratio":%.3f,"iops_ratio":%.3f,"lat_ratio":%.3f,"raw_bw_kib":%s,"ublk_bw_kib":%s,"bw_ratio_rounds":[%s]}' \
		"$job" "$bw" "$iops" "$lat" "$raw_bw" "$ublk_bw" "$rounds")"
done

step "ratios (kvfdpd / raw, medians of $ROUNDS rounds)"
printf '{"scenario":"daemon_fio","accel":"tcg","note":"QEMU TCG guest: emulated CPU and NVMe, not hardware figures","rounds":%s,"runtime_s":%s,"jobs":{%s}}\n' \
	"$ROUNDS" "$SECS" "$body" > "$OUT/fio-ratio.json"
cat "$OUT/fio-ratio.json"
kvfdp-daemon-vmtool ctl /tmp/kvfdpd.sock '{"cmd":"status"}' > "$OUT/status.json"
expect_eq "kvfdpd counted no I/O errors" "$(sed -n 's/.*"errors":\([0-9]*\).*/\1/p' "$OUT/status.json")" 0
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
finish
