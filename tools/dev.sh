#!/usr/bin/env bash
# kvfdp developer entry point.
#   ./tools/dev.sh setup   install missing Debian packages (never upgrades)
#   ./tools/dev.sh build   configure and build into build/ (binaries in build/bin)
#   ./tools/dev.sh test    setup + build, then the full test suite (every label but bench)
#   ./tools/dev.sh demo    setup + build, then the main job on the embedded default
#   ./tools/dev.sh bench   setup + build, then the bench-labelled figures
# Environment: BUILD_DIR (default build), JOBS (default 2).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-2}

say() { printf '== %s\n' "$*" >&2; }

do_setup() {
	if [ "$(id -u)" -eq 0 ]; then
		"$ROOT/tools/setup.sh"
	else
		sudo "$ROOT/tools/setup.sh"
	fi
}

do_build() {
	say "configure + build in $BUILD_DIR (-j$JOBS)"
	cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$BUILD_DIR" -j "$JOBS"
}

do_test() {
	say "ctest: labels unit, bpf, vm, gpu (bench excluded; run ./tools/dev.sh bench)"
	# Tests that need a missing capability exit 77 and are reported as skipped with a reason.
	cd "$BUILD_DIR"
	ctest --output-on-failure -j "$JOBS" -LE bench --timeout 900
}

do_bench() {
	cd "$BUILD_DIR"
	ctest --output-on-failure -L bench -V
}

do_demo() {
	if [ ! -x "$ROOT/tools/demo.sh" ]; then
		echo "dev.sh demo: the demo (a Mooncake KV-cache replay on the FDP SSD model) is not there yet" >&2
		exit 1
	fi
	BUILD_DIR=$BUILD_DIR "$ROOT/tools/demo.sh"
}

cmd=${1:-}
case "$cmd" in
setup) do_setup ;;
build) do_build ;;
test) do_setup; do_build; do_test ;;
demo) do_setup; do_build; do_demo ;;
bench) do_setup; do_build; do_bench ;;
*)
	sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
