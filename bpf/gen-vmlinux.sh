#!/usr/bin/env bash
# Regenerate bpf/include/vmlinux.h from a kernel's BTF.
# Usage: bpf/gen-vmlinux.sh [BTF_FILE]   (default: /sys/kernel/btf/vmlinux of the running kernel)
#
# The committed header came from a 6.18 kernel with bpftool 7.5 (bookworm-backports).
# bpftool >= 7.2 is required: 7.1 (bookworm) declares 1-byte enums such as enum rw_hint as
# 4 bytes, and a CO-RE read of bio->bi_write_hint then returns garbage. Any kernel >= 6.12 will
# do; CO-RE relocates every field access against the running kernel's BTF at load time, and
# fields that differ across kernels are read through the ___variant structs in bpf/core_fixes.bpf.h.
set -euo pipefail
btf=${1:-/sys/kernel/btf/vmlinux}
out=$(dirname "$0")/include/vmlinux.h
ver=$(bpftool version | sed -n 's/^bpftool v\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r major minor <<<"$ver"
if [ "${major:-0}" -lt 7 ] || { [ "$major" -eq 7 ] && [ "$minor" -lt 2 ]; }; then
	echo "gen-vmlinux: bpftool $major.$minor emits 1-byte enums as 4 bytes; install bpftool/bookworm-backports" >&2
	exit 1
fi
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out from $btf"
