#!/usr/bin/env bash
# Formats the project's C, C++ and CUDA sources with clang-format and .clang-format.
#   ./tools/format.sh           rewrite every tracked source in place
#   ./tools/format.sh --check   change nothing; list the files that differ and exit 1 if any do
#   ./tools/format.sh FILE...   rewrite only these files (other than C, C++ or CUDA: left alone)
# bpf/include/vmlinux.h is generated (bpf/gen-vmlinux.sh) and left as bpftool wrote it.
# Without clang-format, --check prints "SKIP: clang-format: ..." and exits 77 (ctest: a skip).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

CF=
for c in clang-format-14 clang-format; do
	if command -v "$c" > /dev/null; then CF=$c; break; fi
done

check=0
[ "${1:-}" = --check ] && { check=1; shift; }
if [ -z "$CF" ]; then
	if [ $check -eq 1 ]; then
		echo "SKIP: clang-format: not installed (./tools/dev.sh setup installs it)"
		exit 77
	fi
	echo "format.sh: clang-format is not installed: run ./tools/dev.sh setup" >&2
	exit 1
fi

if [ $# -gt 0 ]; then
	# Only C, C++ and CUDA sources: clang-format would rewrite a CMakeLists.txt or a .md too.
	files=()
	for f in "$@"; do
		case "$f" in
		*.c | *.h | *.cpp | *.hpp | *.cu | *.cuh) files+=("$f") ;;
		*) echo "format.sh: $f is not a C, C++ or CUDA source; left as it is" >&2 ;;
		esac
	done
	[ ${#files[@]} -gt 0 ] || exit 0
elif git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh' | grep -v '^bpf/include/vmlinux\.h$')
else  # a source tree without git: the same files, build dirs left out
	mapfile -t files < <(find . -path './build*' -prune -o -type f \( -name '*.c' -o -name '*.h' -o \
		-name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print |
		sed 's|^\./||' | grep -v '^bpf/include/vmlinux\.h$' | sort)
fi
[ ${#files[@]} -gt 0 ] || { echo "format.sh: no sources found under $ROOT" >&2; exit 1; }

if [ $check -eq 0 ]; then
	"$CF" -i --style=file "${files[@]}"
	exit 0
fi
# One clang-format for all files: it names each file that differs in a "code should be
# clang-formatted" error.
err=$("$CF" --style=file --dry-run --Werror "${files[@]}" 2>&1 > /dev/null) && rc=0 || rc=$?
mapfile -t bad < <(echo "$err" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ $rc -ne 0 ] && [ ${#bad[@]} -eq 0 ]; then
	echo "format.sh: clang-format failed: $(echo "$err" | head -n 1)"
	exit 1
fi
if [ ${#bad[@]} -gt 0 ]; then
	echo "format.sh: ${#bad[@]} file(s) differ from .clang-format: run ./tools/format.sh"
	printf '  %s\n' "${bad[@]}" | head -n 20 || :
	"$CF" --style=file "${bad[0]}" | diff -u "${bad[0]}" - | head -n 20 || :
	exit 1
fi
echo "format.sh: ${#files[@]} files match .clang-format"
