#!/bin/sh
# daemon_learned: kvfdpd --placement learned on the FDP SSD model, through XFS and ext4: two writers in cgroups of their own (an engine whose files live long, a staging area whose files die young; neither sets a hint) end up on two handles, the projected WAF is lower than with --no-tagger, and a restarted kvfdpd resumes the learned map from its state file.
# LEARNED_FS (a kernel argument: --kernel-args LEARNED_FS=xfs) limits the run to those filesystems.
# vm-args: --lba 4096 --nruh 8 --timeout 600
. /lib/kvfdp/vm-lib.sh
need kvfdpd kvfdp kvfdp-daemon-vmtool
need_ublk
T=kvfdp-daemon-vmtool
SOCK=/tmp/kvfdpd.sock
SIZE_MIB=96
STATE=/tmp/learned.state

# The writers are cgroups the scenario makes: what the learned map must separate.
writer_cgroups engine staging
: > /tmp/kvfdp.toml  # no rules, no writers: the learner keys writers by cgroup

start_kvfdpd() {  # $1: log name; the rest: options
	_log=$1; shift
	rm -f /tmp/kvfdpd.ready
	kvfdpd --backend model --file /tmp/model.img --size ${SIZE_MIB}M --ru-size 1M --nruh 8 --op 0.15 \
		--config /tmp/kvfdp.toml --socket $SOCK --ready-file /tmp/kvfdpd.ready "$@" > "$OUT/kvfdpd_$_log.log" 2>&1 &
	KPID=$!
	wait_until 60 sh -c "test -e /tmp/kvfdpd.ready || ! kill -0 $KPID"
	test -e /tmp/kvfdpd.ready || { cat "$OUT/kvfdpd_$_log.log"; die "kvfdpd ($_log) did not become ready"; }
	DEV=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
}

stop_kvfdpd() {
	kill -TERM $KPID
	check "$1: kvfdpd exits 0" wait $KPID
}

mkfs_mount() {  # $1 fs, $2 dev
	case $1 in
	xfs) # xfsprogs refuses filesystems under 300 MB unless run by fstests (its variables)
		TEST_DIR=/tmp TEST_DEV=$2 QA_CHECK_FS=1 mkfs.xfs -q -f $2 > /dev/null || die "mkfs.xfs $2" ;;
	ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $2 || die "mkfs.ext4 $2" ;;
	esac
	mkdir -p /mnt/kv
	# Online discard: a deleted file's blocks are deallocated at once, so the learner sees
	# the data die (with its age on the device write clock).
	check "$1: mounts with -o discard" mount -t $1 -o discard $2 /mnt/kv || die "cannot mount $1"
}

# The workload: the engine writes 14 x 4 MiB files that stay a while; then each round it
# replaces one of them (so each lives 14 rounds) while, at the same time, the staging area
# writes two 5 MiB files that it deletes at the end of the round. The two write in 64 KiB
# pieces side by side, so on one handle their data shares reclaim units. 16 rounds, about
# 280 MiB in all on a 96 MiB namespace kept two-thirds full: the model garbage-collects, and
# what it must copy depends on whether the engine's data shares units with the staging area's
# (the margins of 16 rounds over the checks below: docs/vm.md, what the suite costs).
workload() { two_lifetimes "$1" /mnt/kv 14 16 4096 5120; }  # $1: label

# waf_of LABEL: the model's projected WAF (mbmw / hbmw) from `kvfdp stats`
waf_of() {
	kvfdp stats --socket $SOCK -o json > "$OUT/stats_$1.json"
	_h=$(json_num hbmw "$OUT/stats_$1.json"); _m=$(json_num mbmw "$OUT/stats_$1.json"); _e=$(json_num mbe "$OUT/stats_$1.json")
	expect_ge "$1: the model erased reclaim units (garbage collection ran)" "$_e" $((SIZE_MIB << 20)) >&2
	awk "BEGIN { printf \"%.4f\", $_m / $_h }"
}

for fs in ${LEARNED_FS:-xfs ext4}; do
	step "$fs, learned: kvfdpd --placement learned ($SIZE_MIB MiB model, 1 MiB RUs, 8 handles), two writers in cgroups /engine and /staging"
	rm -f /tmp/model.img $STATE
	start_kvfdpd ${fs}_learned --placement learned --learn-state $STATE --learn-period 0.5
	mkfs_mount $fs $DEV
	workload "$fs learned"
	# The learner regroups every 0.5 s: wait for a regroup after the last write.
	g0=$(kvfdp policy show --socket $SOCK -o json | json_num recomputes)
	wait_until 30 sh -c "test \$(kvfdp policy show --socket $SOCK -o json | sed -n 's/.*\"recomputes\": *\([0-9]*\).*/\1/p') -gt $((g0 + 1))"
	kvfdp policy show --socket $SOCK --width 160 | tee "$OUT/policy_${fs}.txt"
	kvfdp policy show --socket $SOCK -o json > "$OUT/policy_${fs}.json"
	he=$(learned_handle_of "$OUT/policy_${fs}.txt" /engine@engine)
	hs=$(learned_handle_of "$OUT/policy_${fs}.txt" /staging@staging)
	echo "$fs: /engine on handle '$he', /staging on handle '$hs'"
	check "$fs: kvfdp policy lists the /engine writer" test -n "$he"
	check "$fs: kvfdp policy lists the /staging writer" test -n "$hs"
	check "$fs: the two writers are on two handles" test "$he" != "$hs"
	groups=$(json_num groups "$OUT/policy_${fs}.json")
	expect_ge "$fs: at least two learned groups" "$groups" 2
	waf_l=$(waf_of ${fs}_learned)
	kvfdp files --socket $SOCK --live --top 8 --width 160 | tee "$OUT/files_${fs}.txt"
	check "$fs: kvfdp files names the live engine files' writer" grep -q " /engine@engine " "$OUT/files_${fs}.txt"
	check "$fs: no live staging file is listed" sh -c "! grep -q ' /staging@staging ' $OUT/files_${fs}.txt"
	kvfdp metrics --socket $SOCK > "$OUT/metrics_${fs}.prom"
	check "$fs: kvfdp metrics exports the staging key's lifetime" \
		grep -q '^kvfdp_learned_lifetime_bytes{writer="/staging@staging",class="not_set"' "$OUT/metrics_${fs}.prom"
	(cd /mnt/kv/engine && md5sum e* > /tmp/sums)
	umount /mnt/kv
	stop_kvfdpd "$fs learned"
	check "$fs: the learned state was saved" test -s $STATE

	step "$fs, restart: a new kvfdpd on the same state file resumes the map before any write"
	start_kvfdpd ${fs}_restart --placement learned --learn-state $STATE --learn-period 0.5
	kvfdp policy show --socket $SOCK --width 160 | tee "$OUT/policy_${fs}_restart.txt"
	expect_eq "$fs: /engine keeps handle $he" "$(learned_handle_of "$OUT/policy_${fs}_restart.txt" /engine@engine)" "$he"
	expect_eq "$fs: /staging keeps handle $hs" "$(learned_handle_of "$OUT/policy_${fs}_restart.txt" /staging@staging)" "$hs"
	expect_ge "$fs: the restored map has two groups" "$(kvfdp policy show --socket $SOCK -o json | json_num groups)" 2
	check "$fs: the data is intact after the restart" mount -t $fs $DEV /mnt/kv
	check "$fs: engine files' checksums" sh -c 'cd /mnt/kv/engine && md5sum -c /tmp/sums'
	umount /mnt/kv
	stop_kvfdpd "$fs restart"

	step "$fs, untagged: the same workload with kvfdpd --no-tagger (every write on one handle)"
	rm -f /tmp/model.img
	start_kvfdpd ${fs}_untagged --no-tagger
	mkfs_mount $fs $DEV
	workload "$fs untagged"
	waf_u=$(waf_of ${fs}_untagged)
	umount /mnt/kv
	stop_kvfdpd "$fs untagged"
	echo "$fs: WAF learned $waf_l, untagged $waf_u"
	printf '{"fs": "%s", "waf_learned": %s, "waf_untagged": %s}\n' $fs $waf_l $waf_u >> "$OUT/result.json"
	check "$fs: learned WAF $waf_l < untagged WAF $waf_u" awk "BEGIN { exit !($waf_l < $waf_u) }"
done
finish
