#!/bin/sh
# daemon_fio: fio, the same short jobs on kvfdpd's /dev/ublkbN and on the raw FDP namespace /dev/nvme0n1; writes the throughput and latency ratios to $OUT/fio-ratio.json (TCG figures: not hardware figures).
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 300
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp-daemon-vmtool fio
SECS=${KVFDP_FIO_SECS:-4}
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
		--size=$AREA --time_based --runtime="$SECS" --ramp_time=1 --output-format=json \
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

for job in seq128k rand4k; do
	step "$job: raw namespace, then kvfdpd"
	if [ $job = seq128k ]; then args="--rw=write --bs=128k --iodepth=16"; else args="--rw=randwrite --bs=4k --iodepth=32"; fi
	# shellcheck disable=SC2086
	run_job $job raw /dev/nvme0n1 $args
	# shellcheck disable=SC2086
	run_job $job ublk "$UB" $args
done

step "ratios"
body=""
for job in seq128k rand4k; do
	# shellcheck disable=SC2046
	set -- $(write_stat "$OUT/fio-$job-raw.json") $(write_stat "$OUT/fio-$job-ublk.json")
	[ $# -eq 6 ] || die "$job: no write figures in fio's JSON ($OUT/fio-$job-*.json)"
	expect_ge "$job: fio wrote through kvfdpd (KiB/s)" "${4%.*}" 1
	body="$body${body:+,}$(awk -v j="$job" -v rb="$1" -v ri="$2" -v rl="$3" -v ub="$4" -v ui="$5" -v ul="$6" 'BEGIN {
		printf "\"%s\":{\"raw_bw_kib\":%s,\"raw_iops\":%s,\"raw_lat_ns\":%s,\"ublk_bw_kib\":%s,\"ublk_iops\":%s,\"ublk_lat_ns\":%s,", j, rb, ri, rl, ub, ui, ul
		printf "\"bw_ratio\":%.3f,\"iops_ratio\":%.3f,\"lat_ratio\":%.3f}", (rb > 0 ? ub / rb : 0), (ri > 0 ? ui / ri : 0), (rl > 0 ? ul / rl : 0) }')"
done
printf '{"scenario":"daemon_fio","accel":"tcg","note":"QEMU TCG guest: emulated CPU and NVMe, not hardware figures","runtime_s":%s,"jobs":{%s}}\n' \
	"$SECS" "$body" > "$OUT/fio-ratio.json"
cat "$OUT/fio-ratio.json"
kvfdp-daemon-vmtool ctl /tmp/kvfdpd.sock '{"cmd":"status"}' > "$OUT/status.json"
expect_eq "kvfdpd counted no I/O errors" "$(sed -n 's/.*"errors":\([0-9]*\).*/\1/p' "$OUT/status.json")" 0
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
finish
