#!/usr/bin/env bash
# kvfdp developer entry point.
#   ./tools/dev.sh setup   install missing Debian packages (never upgrades)
#   ./tools/dev.sh build   configure and build into build/ (binaries in build/bin)
#   ./tools/dev.sh test    setup + build (downloading the VM guests' debs meanwhile), then the full
#                          test suite (every label but bench); fails when a test skips for a
#                          capability the run requires (docs/build.md)
#   ./tools/dev.sh demo    setup + build, then the main job on the embedded default
#   ./tools/dev.sh bench   setup + build, then the bench-labelled figures
#   ./tools/dev.sh package setup + build, then kvfdp_<version>_amd64.deb and libkvgpu-dev_<version>_amd64.deb
#                          in build/packages, checked by lintian when it installs without upgrades
# Environment: BUILD_DIR (default build), JOBS (default 2), KVFDP_ALLOW_SKIP (capabilities whose
#   skips `test` accepts, e.g. "gpu root"; gpu and cuda are accepted without it only when the
#   machine has no NVIDIA GPU), CTEST_ARGS (extra ctest arguments for test, e.g. "-R vm_smoke").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-2}

say() { printf '== %s\n' "$*" >&2; }

# As non-root, a machine that has everything needs no sudo (setup.sh --check changes nothing), so
# the suite still runs and its summary names what non-root lacks; only missing packages need root.
do_setup() {
	if [ "$(id -u)" -eq 0 ]; then
		"$ROOT/tools/setup.sh"
	elif "$ROOT/tools/setup.sh" --check; then
		:
	elif command -v sudo >/dev/null; then
		sudo "$ROOT/tools/setup.sh"
	else
		say "setup: the check above failed; installing needs root, and sudo is not installed: run ./tools/dev.sh setup as root"
		exit 1
	fi
}

# do_build [--vm-prefetch]: configure and build; --vm-prefetch downloads the VM guests' debs
# meanwhile (start_vm_prefetch).
do_build() {
	say "configure + build in $BUILD_DIR (-j$JOBS)"
	cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	[ "${1:-}" != --vm-prefetch ] || start_vm_prefetch
	cmake --build "$BUILD_DIR" -j "$JOBS"
}

# The VM tests' debs (each kernel of the matrix, the guest's tools, the systemd guest's system)
# download while the CPU-bound build leaves the network idle: each vm_artefacts* fixture's own
# command (ctest's, so the matrix is tests/vm/CMakeLists.txt's) with --download-only, one after
# another, in the background. Its result changes nothing: the fixtures still resolve, download
# what is missing, build the layers and report under ctest (docs/vm.md, what the suite costs).
VM_PREFETCH_PID=
vm_prefetch() {
	local t0=$SECONDS c n=0 failed=0
	while IFS= read -r c; do
		echo "+ $c --download-only"
		eval "nice -n 10 $c --download-only --quiet" </dev/null || failed=$((failed + 1))
		n=$((n + 1))
	done < <(cd "$BUILD_DIR" && ctest --show-only=json-v1 -R '^vm_artefacts' | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin)["tests"]:
    print(shlex.join(t["command"]))')
	echo "the debs of $n vm_artefacts fixtures fetched in $((SECONDS - t0)) s, $failed failed (the fixtures retry)"
}
start_vm_prefetch() {
	local log=$BUILD_DIR/vm/prefetch.log
	mkdir -p "$BUILD_DIR/vm"
	# its own process group (set -m), so that an exit before the build ends stops all of it
	set -m
	vm_prefetch > "$log" 2>&1 &
	VM_PREFETCH_PID=$!
	set +m
	trap '[ -z "$VM_PREFETCH_PID" ] || kill -- -"$VM_PREFETCH_PID" 2>/dev/null || true' EXIT
	say "downloading the VM guests' debs in the background (log $log)"
}
finish_vm_prefetch() {
	[ -n "$VM_PREFETCH_PID" ] || return 0
	wait "$VM_PREFETCH_PID" || true
	VM_PREFETCH_PID=
	say "VM debs: $(tail -n 1 "$BUILD_DIR/vm/prefetch.log")"
}

# NVIDIA GPUs on the PCI bus (vendor 0x10de, display class), driver or not.
nvidia_gpu_count() {
	local d n=0
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] && case $(cat "$d/class" 2>/dev/null) in 0x03*) n=$((n + 1)) ;; esac
	done
	echo $n
}

# The capabilities whose skips this run accepts: KVFDP_ALLOW_SKIP, plus gpu and cuda on a
# machine without a GPU, and gpu2 on one with fewer than two. Every other skip (root, btf,
# qemu, archive, ...) fails the run.
allowed_skips() {
	local a=${KVFDP_ALLOW_SKIP:-} n
	n=$(nvidia_gpu_count)
	[ "$n" -ge 1 ] || a="$a gpu cuda"
	[ "$n" -ge 2 ] || a="$a gpu2"
	echo "$a" | tr ',' ' '
}

do_test() {
	say "ctest: labels unit, bpf, vm, gpu (bench and stress excluded: ./tools/dev.sh bench; ctest --test-dir build -L stress)"
	# A test that lacks a capability exits 77 with "SKIP: <capability>: <reason>"; the summary
	# at the end lists them and fails the run for any capability not allowed (docs/build.md).
	mkdir -p "$BUILD_DIR/Testing"
	local junit rc=0 src=0
	junit=$(cd "$BUILD_DIR" && pwd)/Testing/kvfdp-test.junit.xml
	rm -f "$junit"
	(cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS" -LE 'bench|stress' --timeout 900 --output-junit "$junit" ${CTEST_ARGS:-}) || rc=$?
	# shellcheck disable=SC2046
	python3 "$ROOT/tests/support/skip-summary" "$junit" $(allowed_skips) || src=$?
	[ $rc -eq 0 ] || { say "ctest failed (exit $rc)"; exit "$rc"; }
	[ $src -eq 0 ] || exit 1
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

# Lintian for the package path only: installed when missing and apt can do so without
# upgrading anything (on a host with an older perl it cannot: then it says so and goes on).
ensure_lintian() {
	command -v lintian > /dev/null 2>&1 && return 0
	[ "$(id -u)" -eq 0 ] || { say "lintian is not installed (as root: apt-get install --no-upgrade lintian)"; return 1; }
	local up
	up=$(apt-get install -s --no-upgrade --no-install-recommends lintian 2>/dev/null | grep '^Inst [^ ]* \[' || true)
	if [ -n "$up" ]; then
		say "lintian not installed: installing it would upgrade $(echo "$up" | awk '{print $2}' | tr '\n' ' ')(never done here)"
		return 1
	fi
	apt-get install -y -q --no-upgrade --no-install-recommends lintian > /dev/null
}

do_package() {
	local out=$BUILD_DIR/packages
	say "cpack: Debian packages in $out"
	rm -rf "$out"
	(cd "$BUILD_DIR" && cpack --config CPackConfig.cmake -B "$out" > /dev/null)
	ls "$out"/*.deb >&2
	if ensure_lintian; then
		# Remaining tags and why they stay: docs/deploy.md (lintian).
		lintian --pedantic -I "$out"/*.deb || say "lintian reported errors (docs/deploy.md lists the expected tags)"
	fi
}

cmd=${1:-}
case "$cmd" in
setup) do_setup ;;
build) do_build ;;
test) do_setup; do_build --vm-prefetch; finish_vm_prefetch; do_test ;;
demo) do_setup; do_build; do_demo ;;
bench) do_setup; do_build; do_bench ;;
package) do_setup; do_build; do_package ;;
*)
	sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
