# /lib/kvfdp/vm-lib.sh: helpers for VM scenarios (busybox sh). Use: . /lib/kvfdp/vm-lib.sh
# Checks log to the console and record failures; the scenario continues and `finish` exits
# non-zero if any check failed. `die` and `skip` end the scenario at once.

KVFDP_FAILED=0
KVFDP_CHECKS=0

# step DESC: a heading in the console log, with the guest uptime (to see where the time goes)
step() { echo; echo "== $* [t=$(cut -d" " -f1 /proc/uptime 2>/dev/null)s]"; }

# check DESC CMD...: runs CMD (output to the console); records a failure unless it exits 0
check() {
	_desc=$1; shift
	KVFDP_CHECKS=$((KVFDP_CHECKS + 1))
	echo "+ $*"
	if "$@"; then
		echo "ok: $_desc"
		return 0
	else
		_rc=$?
		echo "FAIL: $_desc (exit $_rc: $*)"
		KVFDP_FAILED=$((KVFDP_FAILED + 1))
		return $_rc
	fi
}

# expect_eq DESC ACTUAL EXPECTED: records a failure unless the two strings are equal
expect_eq() {
	KVFDP_CHECKS=$((KVFDP_CHECKS + 1))
	if [ "$2" = "$3" ]; then
		echo "ok: $1 ($2)"
	else
		echo "FAIL: $1: got '$2', expected '$3'"
		KVFDP_FAILED=$((KVFDP_FAILED + 1))
		return 1
	fi
}

# expect_ge DESC ACTUAL MIN: records a failure unless the integer ACTUAL >= MIN
expect_ge() {
	KVFDP_CHECKS=$((KVFDP_CHECKS + 1))
	if [ "$2" -ge "$3" ] 2>/dev/null; then
		echo "ok: $1 ($2 >= $3)"
	else
		echo "FAIL: $1: got '$2', expected at least $3"
		KVFDP_FAILED=$((KVFDP_FAILED + 1))
		return 1
	fi
}

# die MSG: the scenario fails now
die() { echo "FAIL: $*"; exit 1; }

# skip CAPABILITY: REASON: the scenario cannot run here (exit 77); the host reports it. Start the
# message with the missing capability (a word, docs/build.md): `skip "ublk: no ublk_drv"`. A skip
# without one counts as "unspecified", which ./tools/dev.sh test never allows. Only for a missing
# capability: a failed command is a failure (die/check), never a skip.
skip() { echo "SKIP: $*"; exit 77; }

# need PROG...: dies unless every PROG is on PATH (a missing project program is a build problem)
need() {
	for _p in "$@"; do
		command -v "$_p" >/dev/null 2>&1 || die "$_p is not in the guest: is it built (BUILD/bin, vm-bin, tests)?"
	done
}

# need_ublk: skips (77) unless the guest kernel has ublk_drv (bookworm's 6.1 cloud kernel has none)
need_ublk() {
	[ "${KVFDP_UBLK:-1}" = 1 ] || skip "ublk: kernel $(uname -r) (--kernel ${KVFDP_KERNEL:-?}) has no ublk_drv: run this scenario on 6.12"
}

# ublk_offers FEATURE: true when the guest's ublk driver offers FEATURE by GET_FEATURES
# (kvfdp-ublk-features' names: AUTO_BUF_REG, SUPPORT_ZERO_COPY, BATCH_IO, SAFE_STOP_DEV, ...).
# Scenarios gate on this, never on the kernel's version.
ublk_offers() {
	[ -n "${KVFDP_UBLK_FEATURES+x}" ] || KVFDP_UBLK_FEATURES=" $(kvfdp-ublk-features 2>/dev/null | tr '\n' ' ')"
	case $KVFDP_UBLK_FEATURES in *" $1 "*) return 0 ;; esac
	return 1
}
# ublk_zero_copy: the driver offers a zero-copy data path (kvfdpd's default where it does)
ublk_zero_copy() { ublk_offers AUTO_BUF_REG || ublk_offers SUPPORT_ZERO_COPY; }
# write_streams DISK: DISK (nvme0n1) takes block write streams (6.16+ with an FDP namespace)
write_streams() { [ "$(cat /sys/block/$1/queue/max_write_streams 2>/dev/null || echo 0)" -gt 0 ]; }

# wait_until SECONDS CMD...: polls CMD every 50 ms until it succeeds; returns 1 after SECONDS.
# For things that have no event to wait on (a device node appearing, a daemon's ready file).
wait_until() {
	_limit=$(($1 * 20)); shift
	_i=0
	until "$@" 2>/dev/null; do
		[ $_i -ge $_limit ] && { echo "wait_until: gave up after $((_limit / 20)) s: $*"; return 1; }
		sleep 0.05
		_i=$((_i + 1))
	done
}

# wait_for PATH SECONDS: wait_until PATH exists
wait_for() { wait_until "$2" test -e "$1"; }

# json_num KEY [FILE]: the first number stored under "KEY" in the JSON on FILE/stdin (nvme -o json output)
json_num() { sed -n "s/.*\"$1\" *: *\(-\{0,1\}[0-9][0-9]*\).*/\1/p" ${2:+"$2"} | head -n 1; }

# size_bytes SIZE: 4096, 64K, 1M, 2G -> bytes
size_bytes() {
	case $1 in
	*K) echo $((${1%K} * 1024)) ;;
	*M) echo $((${1%M} * 1024 * 1024)) ;;
	*G) echo $((${1%G} * 1024 * 1024 * 1024)) ;;
	*T) echo $((${1%T} * 1024 * 1024 * 1024 * 1024)) ;;
	*) echo "$1" ;;
	esac
}

# json_str S: S as a JSON string (escapes backslash and double quote; S has no control characters)
json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

# --- hinted files through kvfdpd (daemon_placement, daemon_streams, stripe scenarios) ---
# Sizes that are no multiple of the 1 MiB reclaim unit, so RUAMW movement is a real check.
HINT_BUF_KIB=4100
HINT_DIO_KIB=3076
HINT_SUM_KIB=$((HINT_BUF_KIB + HINT_DIO_KIB))

# hint_map_config MAP FILE: writes a [placement] config of MAP ("class=handle ...", e.g.
# "not_set=0 none=0 short=5 ...") to FILE and sets HINT_HANDLES to the matching `--handle c=h`
# arguments of `kvfdp-daemon-vmtool placement`, so the check expects exactly that map.
hint_map_config() {
	{ echo '[placement]'; for _m in $1; do echo "${_m%=*} = ${_m#*=}"; done; } > "$2"
	HINT_HANDLES=; for _m in $1; do HINT_HANDLES="$HINT_HANDLES --handle $_m"; done
}

# hinted_writes LABEL SOCK DIR: with the filesystem on kvfdpd's disk mounted at DIR, snapshots
# kvfdpd's ruh and status (/tmp/ruh0.json, /tmp/st0.json), writes for each hint 0 2 3 4 5 a
# buffered file DIR/bH of HINT_BUF_KIB and an O_DIRECT file DIR/dH of HINT_DIO_KIB (fsync'ed,
# seeded), keeps their md5sums in /tmp/sums, unmounts DIR and saves `nvme fdp status` of
# /dev/ng0n1 in /tmp/nvme_status.json. Each class then holds HINT_SUM_KIB (not_set: hint 0 plus
# the filesystem's metadata): hinted_placement_check checks it.
hinted_writes() {
	_T=kvfdp-daemon-vmtool
	$_T snap "$2" ruh /tmp/ruh0.json
	$_T snap "$2" status /tmp/st0.json
	_seed=1
	for _h in 0 2 3 4 5; do
		check "$1buffered $HINT_BUF_KIB KiB with hint $_h" $_T write "$3/b$_h" $_h $HINT_BUF_KIB --seed $_seed
		check "$1O_DIRECT $HINT_DIO_KIB KiB with hint $_h" $_T write "$3/d$_h" $_h $HINT_DIO_KIB --direct --seed $((_seed + 100))
		_seed=$((_seed + 1))
	done
	(cd "$3" && md5sum b* d* > /tmp/sums)
	check "$1unmounts" umount "$3"
	nvme fdp status /dev/ng0n1 -o json > /tmp/nvme_status.json
}

# hinted_placement_check LABEL SOCK: after hinted_writes, each class's bytes went to its
# handle of HINT_HANDLES, by kvfdpd's counters, the drive's RUAMW and nvme-cli's status.
hinted_placement_check() {
	check "$1placement matches" kvfdp-daemon-vmtool placement "$2" /tmp/ruh0.json /tmp/st0.json \
		short=$HINT_SUM_KIB medium=$HINT_SUM_KIB long=$HINT_SUM_KIB extreme=$HINT_SUM_KIB \
		not_set=$HINT_SUM_KIB $HINT_HANDLES --nvme-json /tmp/nvme_status.json
}

# --- two writers of different lifetimes for learned placement (daemon_learned, daemon_streams) ---
# writer_cgroups NAME...: mounts cgroup2 on /sys/fs/cgroup (where it is not) and makes the cgroups
writer_cgroups() {
	mkdir -p /sys/fs/cgroup
	mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null || grep -q " /sys/fs/cgroup cgroup2 " /proc/mounts ||
		die "cannot mount cgroup2 on /sys/fs/cgroup"
	for _c in "$@"; do mkdir -p /sys/fs/cgroup/$_c; done
}

# in_cg NAME CMD...: runs CMD as a member of cgroup NAME (so the files it creates are NAME's)
in_cg() {
	_cg=$1; shift
	sh -c 'echo $$ > /sys/fs/cgroup/'$_cg'/cgroup.procs && exec "$@"' sh "$@"
}

# two_lifetimes LABEL DIR N ROUNDS ENGINE_KIB STAGING_KIB: cgroup engine writes N files of
# ENGINE_KIB in DIR/engine, then each round replaces one (so each lives N rounds) while cgroup
# staging writes two STAGING_KIB files in DIR/staging that it deletes at the end of the round;
# both O_DIRECT, in 64 KiB pieces side by side, no hints. Dies on a failed write.
two_lifetimes() {
	_T=kvfdp-daemon-vmtool
	mkdir -p "$2/engine" "$2/staging"
	_i=1
	while [ $_i -le $3 ]; do
		in_cg engine $_T write "$2/engine/e$_i" 0 $5 --direct --seed $_i || die "$1: engine write"
		_i=$((_i + 1))
	done
	_r=1
	while [ $_r -le $4 ]; do
		_k=$((_r % $3 + 1))
		rm "$2/engine/e$_k"
		in_cg engine $_T write "$2/engine/e$_k" 0 $5 --direct --chunk 64 --seed $((300 + _r)) &
		_epid=$!
		in_cg staging $_T write "$2/staging/a" 0 $6 --direct --chunk 64 --seed $((100 + _r)) || die "$1: staging write"
		in_cg staging $_T write "$2/staging/b" 0 $6 --direct --chunk 64 --seed $((200 + _r)) || die "$1: staging write"
		wait $_epid || die "$1: engine write"
		sync
		rm "$2/staging/a" "$2/staging/b"
		sync
		_r=$((_r + 1))
	done
}

# learned_handle_of POLICY_TXT WRITER: the handle `kvfdp policy show` lists for WRITER's not_set key
learned_handle_of() { awk -v w="$2" '$2 == w && $3 == "not_set" { print $1; exit }' "$1"; }

# --- kvfdpd under fio (daemon_fio, daemon_fio_probe) ---
# kvfdpd_start [ARGS...]: kvfdpd on /dev/ng0n1 (control socket /tmp/kvfdpd.sock, log $OUT/kvfdpd.log)
# with its default data path, or ARGS; waits until it is ready and sets UB (its /dev/ublkbN) and KPID.
kvfdpd_start() {
	rm -f /tmp/kvfdpd.ready
	kvfdpd --device /dev/ng0n1 --socket /tmp/kvfdpd.sock --ready-file /tmp/kvfdpd.ready "$@" >> "$OUT/kvfdpd.log" 2>&1 &
	KPID=$!
	wait_for /tmp/kvfdpd.ready 60 || { cat "$OUT/kvfdpd.log"; die "kvfdpd $* did not become ready"; }
	UB=/dev/ublkb$(cut -d' ' -f2 /tmp/kvfdpd.ready)
	test -b "$UB" || die "no ublk device $UB"
}
# kvfdpd_stop LABEL: kvfdpd's status to $OUT/status-LABEL.json (checks it counted no I/O errors),
# then SIGTERM; checks that it exits 0.
kvfdpd_stop() {
	kvfdp-daemon-vmtool snap /tmp/kvfdpd.sock status "$OUT/status-$1.json"
	expect_eq "$1: kvfdpd counted no I/O errors" "$(kvfdp-daemon-vmtool get "$OUT/status-$1.json" io errors)" 0
	kill -TERM $KPID
	check "$1: kvfdpd exits 0" wait $KPID
}
# fio_write_stat FILE: "bw_kib iops lat_mean_ns" of the write side of fio's JSON output FILE.
fio_write_stat() {
	awk '/"write" : \{/ { w = 1 }
	     w && /"bw" :/ { gsub(/[ ,]/, ""); split($0, a, ":"); bw = a[2] }
	     w && /"iops" :/ { gsub(/[ ,]/, ""); split($0, a, ":"); iops = a[2] }
	     w && /"lat_ns" : \{/ { l = 1 }
	     w && l && /"mean" :/ { gsub(/[ ,]/, ""); split($0, a, ":"); print bw, iops, a[2]; exit }' "$1"
}

# finish: ends the scenario; exit 1 if any check failed
finish() {
	echo
	if [ "$KVFDP_FAILED" -ne 0 ]; then
		echo "== $KVFDP_FAILED of $KVFDP_CHECKS checks failed"
		exit 1
	fi
	echo "== all $KVFDP_CHECKS checks passed"
	exit 0
}
