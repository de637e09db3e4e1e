#!/bin/sh
# daemon_churn: kvfdpd --placement learned on a node whose writers come and go, as on a Kubernetes
# node: two engine "pods" (cgroups named as the kubelet names them, each restart a new pod UID and
# container id) write under their cache directories and restart every few rounds; then thousands of
# short-lived writers die, a create + rename storm and a connection flood hit kvfdpd, and a client
# that is not an admin asks it to stop. At the end: a restarted pod's first files go to the handle
# its workload had learned (across a kvfdpd restart too), a brand-new writer is still learned after
# CHURN_WRITERS dead ones, kvfdpd's tables are within their bounds, a non-admin stop is refused,
# and the disk keeps serving.
# CHURN_WRITERS (a kernel argument: --kernel-args CHURN_WRITERS=N; 10000 by default) sets how many
# short-lived writers die; CHURN_RENAMES (20000) the renames of the storm (each replaces a file
# the tagger tracked); CHURN_CONNS (2000) the connections of the flood.
# vm-args: --lba 4096 --nruh 8 --timeout 900
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp kvfdp-daemon-vmtool kvfdp-churn-vmtool
need_ublk
C=kvfdp-churn-vmtool
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock
SIZE_MIB=96
STATE=/tmp/learned.state
WRITERS=${CHURN_WRITERS:-10000}
RENAMES=${CHURN_RENAMES:-20000}
CONNS=${CHURN_CONNS:-2000}

writer_cgroups churn.slice
# A directory rule, for the rename storm's check: files created under /mnt/kv/rules are class
# short, whatever renames did before.
printf '[[rule]]\npath = "/mnt/kv/rules"\nclass = "short"\n' > /tmp/kvfdp.toml

start_kvfdpd() {  # $1: log name; the rest: options
	_log=$1; shift
	rm -f /tmp/kvfdpd.ready
	kvfdpd --backend model --file /tmp/model.img --size ${SIZE_MIB}M --ru-size 1M --nruh 8 --op 0.15 \
		--config /tmp/kvfdp.toml --socket $SOCK --ready-file /tmp/kvfdpd.ready \
		--placement learned --learn-state $STATE --learn-period 0.5 "$@" > "$OUT/kvfdpd_$_log.log" 2>&1 &
	KPID=$!
	wait_until 60 sh -c "test -e /tmp/kvfdpd.ready || ! kill -0 $KPID"
	test -e /tmp/kvfdpd.ready || { cat "$OUT/kvfdpd_$_log.log"; die "kvfdpd ($_log) did not become ready"; }
	DEV=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
}

# A new pod's container cgroup, as the kubelet's systemd cgroup driver names it: a fresh pod UID
# (with '_' for '-') and a fresh 64-hex container id. Prints its path under /sys/fs/cgroup.
pod_cgroup() {
	_uid=$(tr - _ < /proc/sys/kernel/random/uuid)
	_cid=$(cat /proc/sys/kernel/random/uuid /proc/sys/kernel/random/uuid | tr -d '\n-')
	_p=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$_uid.slice/cri-containerd-$_cid.scope
	mkdir -p /sys/fs/cgroup/$_p || die "mkdir cgroup $_p"
	echo $_p
}
pod_remove() { rmdir /sys/fs/cgroup/$1 /sys/fs/cgroup/${1%/*}; }  # the container, then the pod
# What kvfdp calls every pod of a workload writing under /mnt/kv/DIR (docs/bpf.md, writer identity)
POD_ID='/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod*.slice/cri-containerd-*.scope'
ENGINE_ID="$POD_ID@engine"
STAGING_ID="$POD_ID@staging"

policy() {  # $1: label; the learned map to $OUT/policy_$1.{txt,json}
	kvfdp policy show --socket $SOCK --width 220 > "$OUT/policy_$1.txt"
	kvfdp policy show --socket $SOCK -o json > "$OUT/policy_$1.json"
}
recomputes() { kvfdp policy show --socket $SOCK -o json | json_num recomputes; }
# wait_regroup: until the learner has regrouped twice after now (every 0.5 s)
wait_regroup() {
	_g0=$(recomputes)
	wait_until 30 sh -c "test \$(kvfdp policy show --socket $SOCK -o json | sed -n 's/.*\"recomputes\": *\([0-9]*\).*/\1/p') -gt $((_g0 + 1))"
}
# written_of POLICY_JSON WRITER: the written_bytes of WRITER's not_set key
written_of() {
	awk -v w="\"writer\": \"$2\"" 'index($0, w) { f = 1 } f && /"written_bytes"/ { gsub(/[^0-9]/, ""); print; exit }' "$1"
}
metric() {  # NAME LABELS: one value of `kvfdp metrics` (LABELS as written there, "" for none)
	kvfdp metrics --socket $SOCK | awk -v n="$1${2:+\{$2\}}" '$1 == n { print $2; exit }'
}

step "pods: an engine (files that live 14 rounds) and a staging area (files that die each round) in kubelet-named cgroups, both restarting every 4 rounds"
rm -f /tmp/model.img $STATE
start_kvfdpd learned
TEST_DIR=/tmp TEST_DEV=$DEV QA_CHECK_FS=1 mkfs.xfs -q -f $DEV > /dev/null || die "mkfs.xfs $DEV"
mkdir -p /mnt/kv
check "mounts xfs with -o discard" mount -t xfs -o discard $DEV /mnt/kv || die "cannot mount"
mkdir -p /mnt/kv/engine /mnt/kv/staging /mnt/kv/rules /mnt/kv/jobs /mnt/kv/storm
ENGINE=$(pod_cgroup)
STAGING=$(pod_cgroup)
PODS=2
i=1
while [ $i -le 14 ]; do
	in_cg $ENGINE $T write /mnt/kv/engine/e$i 0 4096 --direct --seed $i || die "engine write"
	i=$((i + 1))
done
r=1
while [ $r -le 16 ]; do
	if [ $((r % 4)) -eq 0 ]; then  # both pods restart: new cgroups, new ids
		pod_remove $ENGINE; pod_remove $STAGING
		ENGINE=$(pod_cgroup); STAGING=$(pod_cgroup)
		PODS=$((PODS + 2))
	fi
	k=$((r % 14 + 1))
	rm /mnt/kv/engine/e$k
	in_cg $ENGINE $T write /mnt/kv/engine/e$k 0 4096 --direct --chunk 64 --seed $((300 + r)) &
	epid=$!
	in_cg $STAGING $T write /mnt/kv/staging/a 0 5120 --direct --chunk 64 --seed $((100 + r)) || die "staging write"
	in_cg $STAGING $T write /mnt/kv/staging/b 0 5120 --direct --chunk 64 --seed $((200 + r)) || die "staging write"
	wait $epid || die "engine write"
	sync
	rm /mnt/kv/staging/a /mnt/kv/staging/b
	sync
	r=$((r + 1))
done
wait_regroup
policy pods
cat "$OUT/policy_pods.txt"
he=$(learned_handle_of "$OUT/policy_pods.txt" "$ENGINE_ID")
hs=$(learned_handle_of "$OUT/policy_pods.txt" "$STAGING_ID")
echo "$PODS pods: the engine's identity on handle '$he', the staging area's on '$hs'"
check "the engine's pods are one writer, listed by identity" test -n "$he"
check "the staging area's pods are one writer, listed by identity" test -n "$hs"
check "the two workloads are on two handles" test "$he" != "$hs"
# A restarted pod's first file takes the identity last resolved in its directory at create
# (docs/bpf.md, writer identity); only each workload's very first file, before any identity was
# resolved in its directory, may write under its raw cgroup id until kvfdpd names it.
podkeys=$(grep -c '^ *[0-9]* */kubepods' "$OUT/policy_pods.txt")
echo "keys of kubepods writers: $podkeys, of $PODS pods"
expect_ge "two workloads' $PODS pods make at most four keys (two identities, two first files)" 4 "$podkeys"

# engine_restarts LABEL BEFORE SEED [fresh]: the engine pod restarts (a new cgroup) and writes a
# 2 MiB file, which must count in full under the engine's identity (from policy BEFORE), on
# handle $he. Without "fresh", the engine directory's identity is known (dir_idents), so the
# pod's first file carries it provisionally from its first request. With "fresh" (kvfdpd started
# since, its maps empty) the pod's first file in the directory gets the raw cgroup id until
# kvfdpd's event thread names the cgroup (docs/bpf.md, the window), which takes as long as it
# takes: the pod first writes a 256 KiB head file, the scenario waits until kvfdpd has resolved
# that create, and the 2 MiB file after it takes the identity at its create.
resolved_above() { test "$(metric kvfdp_writer_identities_total 'result="resolved"')" -gt "$1"; }
engine_restarts() {
	pod_remove $ENGINE
	ENGINE=$(pod_cgroup)
	_w0=$(written_of "$OUT/policy_$2.json" "$ENGINE_ID")
	if [ "${4:-}" = fresh ]; then
		_r0=$(metric kvfdp_writer_identities_total 'result="resolved"')
		in_cg $ENGINE $T write /mnt/kv/engine/$1.head 0 256 --direct --seed $3 || die "engine write"
		wait_until 30 resolved_above "${_r0:-0}" ||
			die "kvfdpd never resolved the new pod's cgroup"
	fi
	in_cg $ENGINE $T write /mnt/kv/engine/$1 0 2048 --direct --seed $3 || die "engine write"
	wait_regroup
	policy $1
	expect_eq "$1: the engine keeps handle $he" "$(learned_handle_of "$OUT/policy_$1.txt" "$ENGINE_ID")" "$he"
	expect_ge "$1: the new pod's file was counted under the engine's identity" \
		"$(written_of "$OUT/policy_$1.json" "$ENGINE_ID")" $((_w0 + 2048 * 1024))
}

step "a restarted engine pod's first file goes to the engine's learned handle"
engine_restarts restart_pod pods 901

step "kvfdpd restarts on its state file; the next pod's first file still goes to the engine's handle"
umount /mnt/kv
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
start_kvfdpd restart
check "mounts again" mount -t xfs -o discard $DEV /mnt/kv || die "cannot mount"
# The rule's directory exists now that the filesystem is mounted: a reload resolves it.
check "kvfdpd reloads its policy" $T ctl $SOCK '{"cmd":"reload"}'
policy restarted
expect_eq "the restored map keeps the engine on $he, by name" "$(learned_handle_of "$OUT/policy_restarted.txt" "$ENGINE_ID")" "$he"
engine_restarts restart_both restarted 902 fresh
rss0=$(awk '/^VmRSS:/ { print $2 }' /proc/$KPID/status)
echo "kvfdpd RSS after the pods: $rss0 KiB"

step "$WRITERS short-lived writers (systemd services churn.slice/job-N.service) each write 16 KiB and die"
check "the writers ran" $C writers /sys/fs/cgroup/churn.slice 0 $WRITERS /mnt/kv/jobs 16
# The engine writes on, so the dead writers' keys age by capacities of writes.
r=1
while [ $r -le 24 ]; do
	k=$((r % 14 + 1))
	rm -f /mnt/kv/engine/e$k
	in_cg $ENGINE $T write /mnt/kv/engine/e$k 0 4096 --direct --chunk 256 --seed $((500 + r)) || die "engine write"
	r=$((r + 1))
done
sync
wait_regroup
policy churned
keys=$(metric kvfdp_learned_keys)
echo "learned keys after $WRITERS dead writers: $keys"
max=$(metric kvfdp_learned_max_keys)
check "the key table ($keys of $max) has room for new writers" test "${keys:-$max}" -lt "$max"
retired=$(metric kvfdp_learned_retired_keys_total)
echo "keys retired: $retired"
# More dead writers than the table holds: only retirement (under pressure: docs/placement.md,
# Retirement) kept it from filling. (A job's one file may count under the job before it, the
# identity its directory last resolved, so not every job makes a key.)
if [ "$WRITERS" -gt "$max" ]; then
	expect_ge "dead writers' keys were retired" "${retired:-0}" 1
fi

step "a brand-new writer (fresh.service) after the churn is learned: a key of its own"
mkdir -p /sys/fs/cgroup/churn.slice/fresh.service /mnt/kv/fresh
in_cg churn.slice/fresh.service $T write /mnt/kv/fresh/f1 0 4096 --direct --seed 77 || die "fresh write"
wait_regroup
policy fresh
check "kvfdp policy lists the new writer" grep -q "churn.slice/fresh.service@fresh" "$OUT/policy_fresh.txt"
expect_eq "no write ever found the key table full" "$(metric kvfdp_learned_overflow_bytes_total)" 0

step "a create + rename storm ($RENAMES renames over one file); directory rules still apply to new files"
check "the storm ran" $C renames /mnt/kv/storm $RENAMES
$T write /mnt/kv/rules/after-storm 0 1024 --seed 5 || die "rules write"
sync
kvfdp files --socket $SOCK --live --width 200 > "$OUT/files_storm.txt"
ino=$(stat -c %i /mnt/kv/rules/after-storm)
expect_eq "a file created after the storm (inode $ino) takes its directory rule's class" \
	"$(awk -v i="$ino" '$2 == i { print $3; exit }' "$OUT/files_storm.txt")" short
kvfdp metrics --socket $SOCK > "$OUT/metrics_storm.prom"
for t in file_table inode_policy inode_writer writer_idents cgroup_paths; do
	n=$(awk -v n="kvfdp_tagger_table_entries{table=\"$t\"}" '$1 == n { print $2 }' "$OUT/metrics_storm.prom")
	l=$(awk -v n="kvfdp_tagger_table_limit{table=\"$t\"}" '$1 == n { print $2 }' "$OUT/metrics_storm.prom")
	echo "table $t: $n of $l"
	check "table $t within its bound" test -n "$n" -a "${n:-1}" -le "${l:-0}"
done

step "a flood of $CONNS connections, each with half a request"
$C flood $SOCK $CONNS | tee "$OUT/flood.json"
check "kvfdpd answers status after the flood" kvfdp status --socket $SOCK
rss1=$(awk '/^VmRSS:/ { print $2 }' /proc/$KPID/status)
echo "kvfdpd RSS: $rss0 KiB after the pods, $rss1 KiB after the churn, storm and flood"
printf '{"writers": %s, "renames": %s, "connections": %s, "keys": %s, "rss_kib_before": %s, "rss_kib_after": %s}\n' \
	$WRITERS $RENAMES $CONNS $keys $rss0 $rss1 > "$OUT/result.json"
# The bounded tables (64 Ki files, 4096 keys, the caches) take tens of MiB at most: growth past
# 64 MiB means something is not bounded.
check "kvfdpd's RSS grew by less than 64 MiB" test $((rss1 - rss0)) -lt 65536

step "a client that is not an admin cannot stop kvfdpd; the disk keeps serving"
chmod 0666 $SOCK  # any local user may connect here: what it may ask is the test
$C as-uid 1000 1000 kvfdp status --socket $SOCK > "$OUT/status_user.txt" 2>&1
check "a non-admin user may read the status" test $? -eq 0
$C as-uid 1000 1000 kvfdp stop --socket $SOCK > "$OUT/stop_user.txt" 2>&1
rc=$?
cat "$OUT/stop_user.txt"
check "a non-admin stop fails" test $rc -ne 0
check "the refusal names the admin group" grep -q "kvfdp-admin" "$OUT/stop_user.txt"
$C as-uid 1000 1000 kvfdp stop --force --socket $SOCK > /dev/null 2>&1
check "a non-admin forced stop fails too" test $? -ne 0
check "kvfdpd is still running" kill -0 $KPID
check "the disk keeps serving writes" $T write /mnt/kv/engine/after-stop 0 1024 --direct --seed 11
check "and reads" $T verify /mnt/kv/engine/after-stop 11
umount /mnt/kv
kvfdp-daemon-vmtool snap $SOCK status "$OUT/status_end.json"
expect_eq "kvfdpd counted no I/O errors" "$(kvfdp-daemon-vmtool get "$OUT/status_end.json" io errors)" 0
kill -TERM $KPID
check "kvfdpd exits 0" wait $KPID
finish
