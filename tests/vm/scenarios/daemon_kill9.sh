#!/bin/sh
# daemon_kill9: kill -9 kvfdpd (tagger on) again and again under load, on XFS and on ext4: a buffered writer, an O_DIRECT writer and a create/delete churner on `-o discard`; each kill after a random (seeded, printed) 0.5-4.4 s; restarts alternate --dev-id 0 --attach and --recover 0. Every kill must be reaped and every restart ready within bounds (else FAIL with the kernel stacks), no writer sees an I/O error, every fsync'ed file has its md5, fsck is clean. Prints restart-to-ready times. docs/deploy.md "kill -9".
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 600
# Kills per filesystem: 10 when the run's --name contains "stress", else 3. A name containing
# "nopin" runs kvfdpd with --bpf-pin-dir none (the tagger unpinned: how kvfdpd was before the fix).
# The seed: --kernel-args kvfdp.seed=N repeats a run's delays (each run prints its seed).
. /lib/kvfdp/vm-lib.sh
need_ublk
need kvfdpd kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock
MNT=/mnt/kv
case ${KVFDP_NAME:-} in *stress*) KILLS=10 ;; *) KILLS=3 ;; esac
PIN_ARGS=""
case ${KVFDP_NAME:-} in *nopin*) PIN_ARGS="--bpf-pin-dir none" ;; esac
SEED=$(sed -n 's/.*kvfdp\.seed=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$SEED" ] || SEED=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
echo "seed $SEED (repeat with --kernel-args kvfdp.seed=$SEED), $KILLS kills per filesystem${PIN_ARGS:+, tagger unpinned}"
KIB=2048   # per written file
TIMES=$OUT/restart_times.txt
: > "$TIMES"

now() { cut -d' ' -f1 /proc/uptime; }

# Every thread's kernel stack of pid $1 and of its children (a writer's subshell: its
# kvfdp-daemon-vmtool), the blocked tasks (sysrq w), what each CPU runs (sysrq l: a spinning
# kworker) and the dmesg tail.
task_stacks() {
	for t in /proc/$1/task/*; do
		[ -d "$t" ] || continue
		echo "task ${t##*/} state $(awk '{print $3}' $t/stat 2>/dev/null) comm $(cat $t/comm 2>/dev/null)"
		cat $t/stack 2>/dev/null
	done
}
dump_stacks() {
	echo "---- kernel stacks of pid $1 ($2)"
	task_stacks $1
	for st in /proc/[0-9]*/stat; do
		# the field after ") " that follows comm is the state, then the parent's pid
		[ "$(sed 's/.*) //' $st 2>/dev/null | cut -d' ' -f2)" = "$1" ] || continue
		c=${st#/proc/}; c=${c%/stat}
		echo "---- its child $c: $(tr '\0' ' ' < /proc/$c/cmdline 2>/dev/null)"
		task_stacks $c
	done
	echo w > /proc/sysrq-trigger 2>/dev/null
	echo l > /proc/sysrq-trigger 2>/dev/null
	echo "---- dmesg (blocked tasks: sysrq w; running ones: sysrq l)"
	dmesg | tail -n 250
}

# reaped PID: the process is gone or a zombie whose threads have all exited.
reaped() {
	[ -d /proc/$1 ] || return 0
	[ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" = Z ] && [ "$(ls /proc/$1/task 2>/dev/null | wc -l)" -le 1 ]
}

# reap_within SECONDS PID WHAT: waits for this shell's child PID and returns its status; if it
# has not exited within SECONDS, fails the run with its kernel stacks (a hang is a FAIL with
# the evidence, never the harness's TIMEOUT).
reap_within() {
	if ! wait_until $1 reaped $2; then
		dump_stacks $2 "$3: still running after $1 s"
		die "$3 did not finish within $1 s: hang"
	fi
	wait $2
}

# bounded SECONDS CMD...: CMD's status, or the run fails with its stacks after SECONDS.
bounded() {
	_bs=$1; shift
	"$@" &
	reap_within $_bs $! "$*"
}

# start_kvfdpd LOG ARGS...: starts kvfdpd; fails the run (with the stacks of the previous
# one, when given as $PREV) unless it is ready within 60 s. Sets KPID and READY_S.
start_kvfdpd() {
	log=$1; shift
	rm -f /tmp/kvfdpd.ready
	t0=$(now)
	kvfdpd --device /dev/ng0n1 --socket $SOCK --ready-file /tmp/kvfdpd.ready $PIN_ARGS "$@" >> "$OUT/$log" 2>&1 &
	KPID=$!
	if ! wait_until 60 sh -c "test -e /tmp/kvfdpd.ready || ! kill -0 $KPID"; then
		tail -n 5 "$OUT/$log"
		dump_stacks $KPID "kvfdpd $* not ready after 60 s"
		die "kvfdpd $* was not ready within 60 s"
	fi
	if ! test -e /tmp/kvfdpd.ready; then
		tail -n 5 "$OUT/$log"
		[ -n "${PREV:-}" ] && dump_stacks $PREV "the killed kvfdpd"
		die "kvfdpd $* exited before it was ready"
	fi
	READY_S=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
}

# The expected md5 of each content (seeds 1-4 buffered, 11-14 O_DIRECT, 2 MiB each).
step "expected contents (tmpfs)"
for s in 1 2 3 4 11 12 13 14; do
	$T write /tmp/expect 0 $KIB --seed $s || die "tmpfs writer failed"
	md5sum < /tmp/expect | cut -d' ' -f1 > /tmp/md5_$s
done
rm -f /tmp/expect
DELAYS=$(awk -v s="$SEED" -v n=$((KILLS * 2)) 'BEGIN { srand(s); for (i = 0; i < n; i++) printf "%.1f ", 0.5 + int(rand() * 40) / 10 }')
echo "kill delays (s): $DELAYS"

# writer NAME SEEDBASE [--direct ...]: writes NAME/f0..f15 round robin until /tmp/stop; each
# file fsync'ed, then its seed recorded in /tmp/m_NAME/fN. A failed write goes to /tmp/errors.
writer() {
	name=$1; base=$2; shift 2
	mkdir -p $MNT/$name /tmp/m_$name
	i=0
	while [ ! -e /tmp/stop ]; do
		f=f$((i % 16)); s=$((base + i % 4))
		if $T write $MNT/$name/$f 0 $KIB --seed $s "$@" 2>> /tmp/errors; then
			echo $s > /tmp/m_$name/$f
		else
			echo "$name/$f seed $s: write failed" >> /tmp/errors
		fi
		i=$((i + 1))
	done
	echo "$name: $i files written" >> /tmp/writers.log
}

# churner: creates, fsyncs and deletes small files (discards on -o discard) until /tmp/stop.
churner() {
	mkdir -p $MNT/churn
	i=0
	while [ ! -e /tmp/stop ]; do
		$T write $MNT/churn/c$((i % 8)) 0 64 --seed 5 2>> /tmp/errors || echo "churn c$((i % 8)): write failed" >> /tmp/errors
		rm -f $MNT/churn/c$(((i + 4) % 8)) 2>> /tmp/errors || echo "churn: rm failed" >> /tmp/errors
		i=$((i + 1))
	done
	echo "churn: $i creates" >> /tmp/writers.log
}

modprobe xfs 2>/dev/null
set -- $DELAYS
for fs in xfs ext4; do
	step "$fs: kvfdpd --dev-id 0 --attach, mkfs, mount -o discard"
	start_kvfdpd kvfdpd_$fs.log --dev-id 0 --attach
	echo "first start ready in $READY_S s"
	dev=/dev/ublkb0
	if [ $fs = xfs ]; then bounded 120 mkfs.xfs -q -f $dev; else bounded 120 mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $dev; fi
	mkdir -p $MNT
	check "$fs mounts with -o discard" bounded 60 mount -o discard $dev $MNT || {
		kill $KPID; reap_within 60 $KPID "kvfdpd after SIGTERM"; continue; }
	rm -rf /tmp/stop /tmp/errors /tmp/writers.log /tmp/m_b /tmp/m_d
	: > /tmp/errors
	writer b 1 & WB=$!
	writer d 11 --direct --chunk 256 & WD=$!
	churner & WC=$!

	k=1
	while [ $k -le $KILLS ]; do
		delay=$1; shift
		if [ $((k % 2)) = 1 ]; then restart="--recover 0"; else restart="--dev-id 0 --attach"; fi
		step "$fs: kill $k/$KILLS after $delay s, then kvfdpd $restart"
		sleep "$delay"   # the random point of the kill (the probe's delay), not a wait for anything
		written=$(timeout 20 $T ctl $SOCK '{"cmd":"status"}' 2>/dev/null | sed -n 's/.*"write_bytes":\([0-9]*\).*/\1/p')
		tk=$(now)
		kill -9 $KPID
		if ! wait_until 40 reaped $KPID; then
			dump_stacks $KPID "kill -9 not reaped after 40 s"
			die "$fs kill $k: the killed kvfdpd (pid $KPID) did not exit within 40 s: hang"
		fi
		wait $KPID 2>/dev/null
		reap_s=$(awk -v a="$tk" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
		PREV=$KPID
		stale=""
		if [ -z "$PIN_ARGS" ] && [ $fs = ext4 ] && [ $k = 1 ]; then
			# A set left by another build: its meta says so (zeros). It must be replaced.
			stale=1
			rm /sys/fs/bpf/kvfdp/ublkb0/meta
			bpftool map create /sys/fs/bpf/kvfdp/ublkb0/meta type array key 4 value 640 entries 1 name kvfdp_meta ||
				die "bpftool could not plant a stale meta"
		fi
		start_kvfdpd kvfdpd_${fs}_restarts.log $restart
		PREV=
		if [ -z "$PIN_ARGS" ]; then
			rm -f /tmp/ks.json
			check "$fs kill $k: status answers within 20 s" timeout 20 $T snap $SOCK status /tmp/ks.json
			expect_eq "$fs kill $k: tagging on after the restart" "$($T get /tmp/ks.json tagging active)" true
			if [ -n "$stale" ]; then
				expect_eq "$fs kill $k: a stale set is not re-opened" "$($T get /tmp/ks.json tagging reopened)" false
				check "$fs kill $k: kvfdpd says it replaced the stale set" \
					grep -q "replacing the pinned set at /sys/fs/bpf/kvfdp/ublkb0" "$OUT/kvfdpd_${fs}_restarts.log"
			else
				expect_eq "$fs kill $k: the pinned set is re-opened" "$($T get /tmp/ks.json tagging reopened)" true
			fi
		fi
		echo "killed after $written bytes written; reaped in $reap_s s; $restart ready in $READY_S s"
		echo "$fs $k $restart reaped_s=$reap_s ${stale:+stale-set-replaced }ready_s=$READY_S" >> "$TIMES"
		k=$((k + 1))
	done

	step "$fs: stop the writers, check every fsync'ed file"
	touch /tmp/stop
	# Each finishes the file it is writing (2 MiB, fsync'ed) and stops.
	reap_within 60 $WB "the buffered writer"
	reap_within 60 $WD "the O_DIRECT writer"
	reap_within 60 $WC "the churner"
	cat /tmp/writers.log
	expect_eq "$fs: writes that failed (I/O errors)" "$(grep -c . /tmp/errors)" 0
	head -n 5 /tmp/errors
	bad=0; n=0
	for m in /tmp/m_b/* /tmp/m_d/*; do
		[ -e "$m" ] || continue
		d=${m%/*}; d=${d##*/m_}
		f=${m##*/}
		n=$((n + 1))
		if [ "$(md5sum < $MNT/$d/$f | cut -d' ' -f1)" != "$(cat /tmp/md5_$(cat $m))" ]; then
			echo "md5 mismatch: $d/$f (seed $(cat $m))"
			bad=$((bad + 1))
		fi
	done
	echo "$n fsync'ed files checked"
	expect_ge "$fs: fsync'ed files checked" $n 8
	expect_eq "$fs: md5 mismatches" $bad 0
	check "$fs unmounts" bounded 120 umount $MNT
	if [ $fs = xfs ]; then
		check "xfs_repair -n is clean" bounded 180 xfs_repair -n $dev
	else
		check "e2fsck -fn is clean" bounded 180 e2fsck -fn $dev
	fi
	kill -TERM $KPID
	check "$fs: kvfdpd exits 0 on SIGTERM" reap_within 60 $KPID "kvfdpd after SIGTERM"
	check "$fs: with nothing mounted, SIGTERM removes the device" sh -c "! test -e $dev"
	if [ -z "$PIN_ARGS" ]; then
		check "$fs: the removed device's tagger set is unpinned" sh -c "! test -e /sys/fs/bpf/kvfdp/ublkb0"
	fi
done

step "no I/O error reached the block layer"
expect_eq "I/O error lines in dmesg" "$(dmesg | grep -c 'I/O error')" 0
dmesg | grep 'I/O error' | head -n 5
step "restart-to-ready times (s)"
cat "$TIMES"
# (a restart that replaced a stale set loaded the tagger afresh: listed, not in the summary)
awk '/stale-set-replaced/ { next } { sub("ready_s=", "", $NF); v[++n] = $NF; s += $NF } END { if (!n) exit;
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	printf "restarts %d: min %.2f median %.2f max %.2f mean %.2f\n", n, v[1], v[int((n + 1) / 2)], v[n], s / n }' "$TIMES" |
	tee "$OUT/restart_summary.txt"
# kvfdpd's own time for the tagger step of each restart (re-opened pinned set, or a load)
cat "$OUT"/kvfdpd_*_restarts.log | sed -n 's/.*BPF tagger: \([a-z-]*\).* in \([0-9]*\) ms.*/\1 \2/p' |
	awk '{ v[++n] = $2; how[$1]++ } END { if (!n) exit;
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	printf "tagger step of %d restarts (ms): min %d median %d max %d;", n, v[1], v[int((n + 1) / 2)], v[n]
	for (h in how) printf " %s %d", h, how[h]; printf "\n" }' | tee -a "$OUT/restart_summary.txt"
# kvfdpd's own exec-to-ready time of each restart and its slowest steps (its "recovered in" line;
# the times above also hold the shell's start and its 50 ms polls of the ready file)
grep -h "recovered in .* after exec" "$OUT"/kvfdpd_*_restarts.log | tee "$OUT/restart_steps.txt" |
	sed -n 's/.*recovered in \([0-9]*\) ms after exec.*/\1/p' |
	awk '{ v[++n] = $1 } END { if (!n) exit;
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	printf "kvfdpd exec to ready, %d restarts (the stale-set one included) (ms): min %d median %d max %d\n", n, v[1], v[int((n + 1) / 2)], v[n] }' |
	tee -a "$OUT/restart_summary.txt"
finish
