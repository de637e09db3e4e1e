#!/usr/bin/env bash
# Guest instructions per request through kvfdpd and the raw paths, counted in a TCG guest by the
# insn_count QEMU plugin (docs/perf.md section 4). Builds the plugin (tools/qemu-plugin/build.sh), then
# runs the bench_insn scenario with it; the scenario's host check prints the table.
#
# Usage: tools/bench/vm-insn.sh [--build-dir DIR] [--kernel SERIES|latest] [--name NAME] [--profile]
#                               [-- RUN-OPTIONS...]
#   defaults: --build-dir <repo>/build, --kernel 6.12, --name bench_insn; RUN-OPTIONS go to tests/vm/run
#   (e.g. --kernel-args "BENCH_TARGETS=raw:zc BENCH_JOBS=rand4k-qd1 BENCH_ROUNDS=2").
#   --profile: the plugin also profiles the brackets by block address and the guest saves its kallsyms;
#   tools/bench/insn-profile.py OUT TARGET JOB then says which kernel functions the requests cost.
# The build needs kvfdpd, kvfdp-daemon-vmtool, kvfdp-insn-mark and kvfdp-ublk-features.
# Exit: tests/vm/run's (0 pass, 77 skip: "SKIP: qemu-plugin: ..." when the plugin cannot be built, 1 fail).
# The table: BUILD/vm/NAME/out/insn-table.txt (and insn.json); the counts: out/plugin/insn.txt.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$REPO/build KERNEL=6.12 NAME=bench_insn PROFILE=() PSPEC=
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir|--kernel|--name)
		[ $# -ge 2 ] || { echo "vm-insn.sh: $1 needs a value" >&2; exit 1; }
		case $1 in --build-dir) BUILD=$2 ;; --kernel) KERNEL=$2 ;; --name) NAME=$2 ;; esac
		shift 2 ;;
	--profile) PROFILE=(--kernel-args BENCH_PROFILE=1) PSPEC=',profile={out}/profile'; shift ;;
	--) shift; break ;;
	-h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vm-insn.sh: unknown option '$1' (see --help)" >&2; exit 1 ;;
	esac
done
[ -d "$BUILD" ] || { echo "vm-insn.sh: build dir $BUILD does not exist" >&2; exit 1; }
BUILD=$(cd "$BUILD" && pwd)
so=$("$REPO/tools/qemu-plugin/build.sh" --out "$BUILD/qemu-plugin")
rc=$?
if [ $rc -eq 77 ]; then
	echo "$so" | grep '^SKIP: ' | tail -n 1
	exit 77
fi
[ $rc -eq 0 ] || { echo "vm-insn.sh: building the insn_count plugin failed (tools/qemu-plugin/build.sh)" >&2; exit 1; }
exec "$REPO/tests/vm/run" bench_insn --build-dir "$BUILD" --kernel "$KERNEL" --name "$NAME" \
	--plugin "$so,out={out}/insn.txt$PSPEC" "${PROFILE[@]}" "$@"
