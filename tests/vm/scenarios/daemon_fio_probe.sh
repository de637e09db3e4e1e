#!/bin/sh
# daemon_fio_probe: where the time goes on kvfdpd's data path in the guest. For the raw namespace and kvfdpd
# in each data path the kernel offers (zero copy, copy), fio jobs (128 KiB sequential writes at QD1 and QD16,
# 4 KiB random writes at QD32) with, per job: throughput, mean latency, kvfdpd's CPU time per request, the
# guest's busy CPU share, and (ftrace function_graph on the ublk driver's task-work callbacks, which run the
# copy in copy mode) how many callbacks ran, their mean duration and requests per callback. One line per job
# in $OUT/probe.txt and $OUT/probe.json. A measurement tool (TCG figures), not a pass/fail test of speed.
# Options as kernel arguments (init's environment): --kernel-args "PROBE_TARGETS=raw:ublk:copy:q1=--queues,1
# PROBE_JOBS=seq128k-qd16:rand4k-qd32 PROBE_ROUNDS=3 PROBE_SECS=2" (NAME=ARGS: kvfdpd with ARGS, commas for spaces;
# a target named *nothp* runs with transparent huge pages off in the guest, the others with them on;
# ring_plain, ring_coop, ring_defer: kvfdpd with KVFDPD_RING capping its queue rings' task-work mode).
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 540
. /lib/kvfdp/vm-lib.sh
need_ublk
need kvfdpd kvfdp-daemon-vmtool fio
T=kvfdp-daemon-vmtool
SECS=${PROBE_SECS:-2}
AREA=256M
SOCK=/tmp/kvfdpd.sock   # kvfdpd_start's
TR=/sys/kernel/tracing
HZ=100   # USER_HZ: /proc/stat and /proc/PID/stat tick

# busy_ticks: "busy total" ticks of all CPUs from /proc/stat
busy_ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat; }
# kvfdpd_ticks: "utime stime" summed over every kvfdpd thread
kvfdpd_ticks() {
	[ -n "$KPID" ] || { echo 0 0; return; }
	cat /proc/$KPID/task/*/stat 2>/dev/null | awk '{ sub(/^.*\) /, ""); u += $12; k += $13 } END { print u + 0, k + 0 }'
}
# writes: kvfdpd's count of write requests
writes() { [ -n "$KPID" ] || { echo 0; return; }; $T snap $SOCK status /tmp/st.json && $T get /tmp/st.json io writes; }

# The ublk driver's task-work callbacks (6.18: ublk_cmd_tw_cb / ublk_cmd_list_tw_cb; 6.12:
# ublk_rq_task_work_cb): the driver runs the copy of a write (ublk_map_io) inside them.
TWF=""
for f in ublk_cmd_tw_cb ublk_cmd_list_tw_cb ublk_rq_task_work_cb; do
	grep -q "^$f " $TR/available_filter_functions 2>/dev/null && TWF="$TWF $f"
done
echo "traced ublk task-work callbacks:${TWF:- none}"
trace_on() {
	[ -n "$TWF" ] || return 0
	echo 0 > $TR/tracing_on
	echo nop > $TR/current_tracer
	echo 16384 > $TR/buffer_size_kb
	: > $TR/trace
	: > $TR/set_ftrace_filter
	for f in $TWF; do echo $f >> $TR/set_ftrace_filter; done
	echo function_graph > $TR/current_tracer
	echo 1 > $TR/tracing_on
}
# trace_off: "calls mean_us" of the traced callbacks since trace_on
trace_off() {
	[ -n "$TWF" ] || { echo "0 0"; return; }
	echo 0 > $TR/tracing_on
	awk '/ublk_/ && / us / { for (i = 1; i < NF; i++) if ($(i + 1) == "us") { v = $i; gsub(/[^0-9.]/, "", v); s += v; n++; break } }
	     END { printf "%d %.1f\n", n, n ? s / n : 0 }' $TR/trace
	echo nop > $TR/current_tracer
	: > $TR/set_ftrace_filter
}

# The string-copy features the kernel's memcpy chooses by (FSRM: rep movsb); TCG copies rep movsb a byte a step.
echo "cpu flags: $(grep -m 1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -x -E 'erms|fsrm' | tr '\n' ' ')"
step "which data path does kvfdpd choose here?"
kvfdpd_start
$T snap $SOCK status /tmp/status-probe.json
MODE=$($T get /tmp/status-probe.json data_path mode)
echo "kvfdpd's default data path: $MODE"
kvfdpd_stop probe
TARGETS="raw ublk"
[ "$MODE" = zero-copy ] && TARGETS="raw ublk copy"
[ -n "$PROBE_TARGETS" ] && TARGETS=$(echo "$PROBE_TARGETS" | tr : " ")

check "fill" fio --name=fill --filename=/dev/nvme0n1 --rw=write --bs=1M --size=$AREA --direct=1 \
	--ioengine=io_uring --iodepth=8 --output=/dev/null

JOBS=$(echo "${PROBE_JOBS:-seq128k-qd1:seq128k-qd16:rand4k-qd32}" | tr : " ")
printf '%-6s %-13s %10s %8s %9s %12s %9s %6s %8s %9s %8s\n' target job bw_kib iops lat_us kvfdpd_us/io of_it_usr busy% tw_calls tw_mean_us io/tw \
	| tee "$OUT/probe.txt"
json=""
ROUNDS=${PROBE_ROUNDS:-1}
r=1
while [ $r -le $ROUNDS ]; do
# odd rounds in the given order, even rounds reversed
order=$TARGETS
[ $((r % 2)) = 0 ] && order=$(echo $TARGETS | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
for t in $order; do
	KPID=""
	THP=/sys/kernel/mm/transparent_hugepage/enabled
	case $t in *nothp*) echo never > $THP ;; *) echo always > $THP ;; esac
	case $t in
	raw) dev=/dev/nvme0n1 ;;
	ublk) kvfdpd_start; dev=$UB ;;
	copy|copy_nothp) kvfdpd_start --no-zero-copy; dev=$UB ;;
	ublk_nothp) kvfdpd_start; dev=$UB ;;
	ring_*) export KVFDPD_RING=${t#ring_}; kvfdpd_start; unset KVFDPD_RING; dev=$UB ;;
	*) kvfdpd_start $(echo "$t" | sed 's/^[a-z]*=//; s/,/ /g'); dev=$UB ;;
	esac
	[ -n "$KPID" ] && echo "$t: THP $(cat $THP); kvfdpd $(grep AnonHugePages /proc/$KPID/smaps_rollup)"
	for j in $JOBS; do
		case $j in
		seq128k-qd1) args="--rw=write --bs=128k --iodepth=1" ;;
		seq128k-qd16) args="--rw=write --bs=128k --iodepth=16" ;;
		rand4k-qd32) args="--rw=randwrite --bs=4k --iodepth=32" ;;
		rand4k-qd1) args="--rw=randwrite --bs=4k --iodepth=1" ;;
		esac
		[ $t = raw ] || trace_on
		set -- $(busy_ticks)
		b0=$1 a0=$2
		set -- $(kvfdpd_ticks)
		u0=$1 k0=$2
		w0=$(writes)
		# shellcheck disable=SC2086
		check "fio $j on $t" fio --name="$j" --filename="$dev" --direct=1 --ioengine=io_uring --size=$AREA \
			--time_based --runtime="$SECS" --output-format=json --output="$OUT/fio-$j-$t-$r.json" $args
		w1=$(writes)
		set -- $(kvfdpd_ticks)
		u1=$1 k1=$2
		set -- $(busy_ticks)
		b1=$1 a1=$2
		tw="0 0"
		[ $t = raw ] || tw=$(trace_off)
		set -- $(fio_write_stat "$OUT/fio-$j-$t-$r.json") $tw
		bw=$1 iops=$2 lat=$3 calls=$4 twmean=$5
		n=$((w1 - w0))
		kus=$(awk -v k=$((u1 - u0 + k1 - k0)) -v n=$n -v hz=$HZ 'BEGIN { printf "%.1f", (n > 0 ? k * 1e6 / hz / n : 0) }')
		kusr=$(awk -v k=$((u1 - u0)) -v n=$n -v hz=$HZ 'BEGIN { printf "%.1f", (n > 0 ? k * 1e6 / hz / n : 0) }')
		busy=$(awk -v b=$((b1 - b0)) -v a=$((a1 - a0)) 'BEGIN { printf "%.0f", (a > 0 ? 100 * b / a : 0) }')
		iotw=$(awk -v n=$n -v c=$calls 'BEGIN { printf "%.1f", (c > 0 ? n / c : 0) }')
		latus=$(awk -v l=$lat 'BEGIN { printf "%.0f", l / 1000 }')
		printf '%-6s %-13s %10s %8.0f %9s %12s %9s %6s %8s %9s %8s\n' $t $j $bw $iops $latus $kus $kusr $busy $calls $twmean $iotw \
			| tee -a "$OUT/probe.txt"
		json="$json${json:+,}{\"round\":$r,\"target\":\"$t\",\"job\":\"$j\",\"bw_kib\":$bw,\"iops\":$iops,\"lat_us\":$latus,\"kvfdpd_cpu_us_per_io\":$kus,\"kvfdpd_user_us_per_io\":$kusr,\"busy_pct\":$busy,\"tw_calls\":$calls,\"tw_mean_us\":$twmean,\"io_per_tw\":$iotw}"
	done
	[ $t = raw ] || kvfdpd_stop "$t-$r"
done
r=$((r + 1))
done
printf '{"scenario":"daemon_fio_probe","kernel":"%s","accel":"tcg","runtime_s":%s,"rows":[%s]}\n' "$(uname -r)" "$SECS" "$json" \
	> "$OUT/probe.json"
cat "$OUT/probe.txt"
finish
