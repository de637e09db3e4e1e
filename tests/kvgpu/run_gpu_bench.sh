#!/bin/sh
# Runs libkvgpu's GPU bench from a build dir and writes its JSON (label gpu; exit 77 = no GPU).
# Usage: tests/kvgpu/run_gpu_bench.sh [BUILD_DIR] [NAME=DIR ...]
#   BUILD_DIR  a configured and built kvfdp build dir with CUDA (default: ./build)
#   NAME=DIR   directories to measure (default tmpfs=/dev/shm var-tmp=/var/tmp); put one on
#              the NVMe the KV cache will use, e.g. nvme=/mnt/kv
# Environment: KVGPU_BENCH_JSON (default BUILD_DIR/bench_kvgpu_gpu.json), KVGPU_BENCH_MIB,
# KVGPU_BENCH_REPS, KVGPU_BENCH_SLOT_KIB, KVGPU_BENCH_SLOTS, KVGPU_BENCH_DEVICE.
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
bin=$build/tests/bench_kvgpu_gpu
if [ ! -x "$bin" ]; then
	if [ -f "$build/CMakeCache.txt" ]; then
		cmake --build "$build" --target bench_kvgpu_gpu >/dev/null || { echo "run_gpu_bench: building bench_kvgpu_gpu in $build failed" >&2; exit 1; }
	fi
fi
if [ ! -x "$bin" ]; then
	if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^KVFDP_WITH_CUDA:BOOL=ON' "$build/CMakeCache.txt"; then
		echo "SKIP: cuda: $build was configured without CUDA (reconfigure with nvcc on PATH or -DKVFDP_WITH_CUDA=ON)"
		exit 77
	fi
	echo "run_gpu_bench: no $bin: pass a configured build dir (cmake -S . -B build && cmake --build build)" >&2
	exit 1
fi
dirs=
for t in "$@"; do dirs=${dirs:+$dirs,}$t; done
export KVGPU_BENCH_DIRS=${dirs:-${KVGPU_BENCH_DIRS:-}}
export KVGPU_BENCH_JSON=${KVGPU_BENCH_JSON:-$build/bench_kvgpu_gpu.json}
exec "$bin"
