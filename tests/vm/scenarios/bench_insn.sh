#!/bin/sh
# bench_insn: guest instructions per request, kernel and user, counted by the insn_count QEMU plugin
# (tools/qemu-plugin; tools/bench/vm-insn.sh loads it and makes the table, docs/perf.md section 4).
# Each fio job runs with N1 and N2 requests per target, each run bracketed by kvfdp-insn-mark's markers,
# and that pair BENCH_REPEATS times; the host check takes each N's smallest count over the repeats (a
# one-off burst of background work only adds), and (min(N2) - min(N1)) / (N2 - N1) cancels fio's start-up
# and exit. Through kvfdpd the area is written whole first, so that every measured write is an overwrite.
# Targets: raw (/dev/ng0n1,
# io_uring_cmd NVMe passthrough), block (/dev/nvme0n1, io_uring), and kvfdpd's /dev/ublkbN in its modes:
# zc (the default: zero copy, BATCH_IO where offered, class map, tagger, twin), copy (--no-zero-copy),
# nobatch (--no-batch-io, only where the driver offers BATCH_IO), learned (--placement learned),
# notagger (--no-tagger), notwin (--twin-memory 0). (learned with --learn-period 3600: its regroup is periodic
# work, not the request's, and would add a share that depends on the wall time.) The guest writes the brackets' labels, in order, to
# $OUT/bench-phases.txt (TARGET JOB N REPEAT); the counts come back in $OUT/plugin/insn.txt.
# Kernel arguments (init's environment): BENCH_TARGETS=raw:block:zc:... (also NAME=ARGS: kvfdpd with ARGS,
# commas for spaces; baseNAME=ARGS runs BUILD/bin/kvfdpd-base instead) BENCH_JOBS=rand4k-qd1:...
# BENCH_REPEATS=3 (each job's N1 and N2 brackets, in turn), BENCH_ROUNDS=1 (every target's jobs again, in the
# reverse order on even rounds), BENCH_PROFILE=1.
# The guest: one vCPU, TCG's instruction counter as its clock (--icount 3) and the namespace on QEMU's null-co
# driver with a fixed 1 ms latency (--null-disk), so that what the guest does while a request waits does not
# depend on how fast the host is (docs/perf.md section 4).
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --smp 1 --icount 3 --null-disk 1000000 --timeout 2400
. /lib/kvfdp/vm-lib.sh
need_ublk
need kvfdpd kvfdp-daemon-vmtool kvfdp-insn-mark kvfdp-ublk-features fio
T=kvfdp-daemon-vmtool
AREA=256M
SOCK=/tmp/kvfdpd.sock # kvfdpd_start's
PHASES=$OUT/bench-phases.txt
: > "$PHASES"

FEATURES=$(kvfdp-ublk-features 2>&1)
echo "ublk features: $(echo $FEATURES)"
TARGETS="raw block zc copy learned notagger notwin"
echo "$FEATURES" | grep -qx BATCH_IO && TARGETS="raw block zc copy nobatch learned notagger notwin"
[ -n "$BENCH_TARGETS" ] && TARGETS=$(echo "$BENCH_TARGETS" | tr : " ")
JOBS=$(echo "${BENCH_JOBS:-rand4k-qd1:rand4k-qd32:seq128k-qd1:randread4k-qd1}" | tr : " ")
ROUNDS=${BENCH_ROUNDS:-1}
REPEATS=${BENCH_REPEATS:-3}
case $REPEATS in '' | *[!0-9]* | 0) die "BENCH_REPEATS=$REPEATS: a count of 1 or more" ;; esac

# BENCH_PROFILE=1 (vm-insn.sh --profile): the kernel's symbols, for tools/bench/insn-profile.py
# (dumped at the end, with the BPF programs' JIT images named, while kvfdpd's pinned tagger is loaded)
if [ -n "$BENCH_PROFILE" ]; then
	echo 0 > /proc/sys/kernel/kptr_restrict
	echo 1 > /proc/sys/net/core/bpf_jit_kallsyms 2>/dev/null
fi

# fio's FDP placement on the passthrough engine (fio 3.34+: fdp=1); without it, plain io_uring_cmd
RAW_FDP=""
fio --cmdhelp=fdp 2>&1 | grep -q "^fdp " && RAW_FDP="--fdp=1 --fdp_pli=1"
echo "raw target: io_uring_cmd ${RAW_FDP:-without FDP placement (this fio has no fdp option)}"

check "fill the measured area" fio --name=fill --filename=/dev/nvme0n1 --rw=write --bs=1M --size=$AREA --direct=1 \
	--ioengine=io_uring --iodepth=8 --output=/dev/null

# settle: waits (up to 120 s) until the guest's CPU is at most 25% busy over a second while this script
# waits (its own awk and /proc reads cost a few ticks), so that boot-time background work (the kernel's crypto self-tests run in kthreads after the
# first module loads: hundreds of millions of instructions of RSA under TCG) is not in the first
# bracket. A quiescence test, with the second as its measuring window.
busy_ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t - $5 - $6; exit }' /proc/stat; }
settle() {
	i=0
	while [ $i -lt 120 ]; do
		b0=$(busy_ticks)
		sleep 1
		b1=$(busy_ticks)
		[ $((b1 - b0)) -le 25 ] && { echo "settled after $i s ($((b1 - b0)) busy ticks in the last second)"; return 0; }
		i=$((i + 1))
	done
	die "the guest did not settle (its CPU stayed busy for 120 s)"
}
settle

# ios FILE: the requests fio completed (read + write + trim total_ios of its JSON)
ios() { awk '/"total_ios" :/ { gsub(/[ ,]/, ""); split($0, a, ":"); s += a[2] } END { print s + 0 }' "$1"; }

# measure TARGET JOB DEV ENGINE-ARGS...: the job with N1 and then N2 requests, each between markers, REPEATS times
measure() {
	t=$1 j=$2 dev=$3
	shift 3
	case $j in
	rand4k-qd1) args="--rw=randwrite --bs=4k --iodepth=1" bs=4096 n1=200 n2=3200 ;;
	rand4k-qd32) args="--rw=randwrite --bs=4k --iodepth=32" bs=4096 n1=200 n2=3200 ;;
	seq128k-qd1) args="--rw=write --bs=128k --iodepth=1" bs=131072 n1=50 n2=650 ;;
	randread4k-qd1) args="--rw=randread --bs=4k --iodepth=1" bs=4096 n1=200 n2=3200 ;;
	*) die "unknown job $j" ;;
	esac
	rep=1
	while [ $rep -le "$REPEATS" ]; do
		for n in $n1 $n2; do
			echo "$t $j $n $rep" >> "$PHASES"
			fout=$OUT/fio-$t-$j-$n-$rep.json
			# shellcheck disable=SC2086
			check "fio $j on $t, $n requests ($rep of $REPEATS)" kvfdp-insn-mark fio --name="$j" --filename="$dev" "$@" \
				--size=$AREA --io_size=$((n * bs)) --randrepeat=1 --disk_util=0 --eta=never --output-format=json \
				--output="$fout" $args
			expect_eq "$t $j: fio completed $n requests" "$(ios "$fout")" "$n"
		done
		rep=$((rep + 1))
	done
}

r=1
while [ "$r" -le "$ROUNDS" ]; do
	order=$TARGETS
	[ $((r % 2)) = 0 ] && order=$(echo $TARGETS | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
	for t in $order; do
		step "round $r: $t"
		KPID=""
		case $t in
		raw) ;;
		block) ;;
		zc) kvfdpd_start ;;
		copy) kvfdpd_start --no-zero-copy ;;
		nobatch) kvfdpd_start --no-batch-io ;;
		learned) kvfdpd_start --placement learned --learn-state "" --learn-period 3600 ;;
		notagger) kvfdpd_start --no-tagger ;;
		notwin) kvfdpd_start --twin-memory 0 ;;
		base*=*) # an earlier kvfdpd, copied by hand to BUILD/bin/kvfdpd-base, for before/after in one boot
			need kvfdpd-base
			mkdir -p /tmp/base && ln -sf "$(command -v kvfdpd-base)" /tmp/base/kvfdpd
			PATH=/tmp/base:$PATH kvfdpd_start $(echo "${t#*=}" | tr , ' ') ;;
		*=*) kvfdpd_start $(echo "${t#*=}" | tr , ' ') ;; # NAME=ARGS: kvfdpd with ARGS (commas for spaces)
		*) die "unknown target $t (raw block zc copy nobatch learned notagger notwin, NAME=ARGS)" ;;
		esac
		t=${t%%=*}
		if [ -n "$KPID" ]; then
			$T snap $SOCK status "$OUT/status-start-$t-$r.json"
			echo "$t: data path $($T get "$OUT/status-start-$t-$r.json" data_path mode)"
		fi
		# a warm-up, not counted: fio's and kvfdpd's first touches of their pages
		case $t in
		raw) fdev=/dev/ng0n1 feng="--ioengine=io_uring_cmd --cmd_type=nvme" ;;
		block) fdev=/dev/nvme0n1 feng="--ioengine=io_uring --direct=1" ;;
		*) fdev=$UB feng="--ioengine=io_uring --direct=1" ;;
		esac
		# shellcheck disable=SC2086
		check "warm-up on $t" fio --name=warm --filename="$fdev" $feng --rw=randwrite --bs=4k --iodepth=4 \
			--size=$AREA --io_size=1M --disk_util=0 --eta=never --output=/dev/null
		# Through kvfdpd the area is written once whole first, so that every measured write is an
		# overwrite in the twin's models and the learner's map, in each repeat alike (a first write to an
		# LBA costs the twin less than an overwrite, and the first repeat would otherwise have the most).
		[ -n "$KPID" ] && check "fill the measured area through $t" fio --name=fill --filename="$UB" --rw=write \
			--bs=1M --size=$AREA --direct=1 --ioengine=io_uring --iodepth=8 --output=/dev/null
		settle # the new disk's partition scan, the tagger's load: not in the first bracket
		for j in $JOBS; do
			# shellcheck disable=SC2086
			case $t in
			raw) measure $t $j /dev/ng0n1 --ioengine=io_uring_cmd --cmd_type=nvme $RAW_FDP ;;
			block) measure $t $j /dev/nvme0n1 --ioengine=io_uring --direct=1 ;;
			*) measure $t $j "$UB" --ioengine=io_uring --direct=1 ;;
			esac
		done
		[ -n "$KPID" ] && kvfdpd_stop "$t-$r"
	done
	r=$((r + 1))
done
[ -n "$BENCH_PROFILE" ] && cat /proc/kallsyms > "$OUT/kallsyms.txt"
echo "phases: $(wc -l < "$PHASES")"
finish
