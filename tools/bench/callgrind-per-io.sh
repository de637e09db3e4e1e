#!/bin/sh
# callgrind-per-io.sh: user-space instructions per kvfdpd request, deterministic: runs
# bench_daemon_engine under callgrind at two request counts, so start-up and warm-up cancel:
# Ir per request = (Ir(N2) - Ir(N1)) / (N2 - N1). Extra arguments go to the bench
# (e.g. --size 524288 --max-transfer 131072, --untagged, --op read, --zero-copy).
#   tools/bench/callgrind-per-io.sh [--build-dir DIR] [--n1 N] [--n2 N] [BENCH ARGS...]
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
build="$here/build"
n1=20000
n2=40000
while [ $# -gt 0 ]; do
	case "$1" in
	--build-dir) build=$2; shift 2 ;;
	--n1) n1=$2; shift 2 ;;
	--n2) n2=$2; shift 2 ;;
	-h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) break ;;
	esac
done
bench="$build/tests/bench_daemon_engine"
command -v valgrind >/dev/null || { echo "callgrind-per-io: valgrind not found; apt-get install valgrind" >&2; exit 1; }
[ -x "$bench" ] || { echo "callgrind-per-io: $bench missing; build it: cmake --build $build --target bench_daemon_engine" >&2; exit 1; }
[ "$n2" -gt "$n1" ] 2>/dev/null || { echo "callgrind-per-io: --n2 must be greater than --n1" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# total N ARGS...: the Ir total of one run of N requests.
total() {
	n=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$n" "$bench" --requests "$n" "$@" \
		>"$tmp/out.$n" 2>"$tmp/err.$n" || { cat "$tmp/err.$n" >&2; exit 1; }
	sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$tmp/cg.$n"
}
t1=$(total "$n1" "$@")
t2=$(total "$n2" "$@")
shift_args=$*
# IoEngine::start + IoEngine::on_device_cqe, inclusive (command build, null queue, commit
# SQE): the engine's share; the rest is the CQE dispatch loop and the rig playing the kernel.
engine() {
	n=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cge.$n" \
		--toggle-collect='kvfdp::daemon::IoEngine::start(*' \
		--toggle-collect='kvfdp::daemon::IoEngine::on_device_cqe(*' \
		"$bench" --requests "$n" "$@" >/dev/null 2>"$tmp/erre.$n" || { cat "$tmp/erre.$n" >&2; exit 1; }
	sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$tmp/cge.$n"
}
e1=$(engine "$n1" "$@")
e2=$(engine "$n2" "$@")
if [ -z "$t1" ] || [ -z "$t2" ] || [ -z "$e1" ] || [ -z "$e2" ]; then
	echo "callgrind-per-io: no totals in the callgrind output" >&2
	exit 1
fi
allocs=$(sed -n 's/.*"allocations_per_request":\([0-9.]*\).*/\1/p' "$tmp/out.$n2")
cmds=$(sed -n 's/.*"device_cmds_per_request":\([0-9.]*\).*/\1/p' "$tmp/out.$n2")
awk -v t1="$t1" -v t2="$t2" -v n1="$n1" -v n2="$n2" -v a="$allocs" -v c="$cmds" -v args="$shift_args" -v e1="$e1" -v e2="$e2" 'BEGIN {
	printf "{\"bench\":\"callgrind_per_io\",\"args\":\"%s\",\"n1\":%d,\"ir1\":%d,\"n2\":%d,\"ir2\":%d,\"ir_per_request\":%.1f,\"engine_ir_per_request\":%.1f,\"device_cmds_per_request\":%s,\"allocations_per_request\":%s}\n", args, n1, t1, n2, t2, (t2 - t1) / (n2 - n1), (e2 - e1) / (n2 - n1), c, a
}'
