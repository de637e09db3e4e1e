#!/bin/sh
# control.sh: builds kvfdpd's control-protocol libFuzzer target (tests/kvfdpd/fuzz_control.cpp,
# fuzz_control_check.cpp, kvfdpd/daemon/ctl/control_proto.cpp and proto/*.cpp) with clang
# -fsanitize=fuzzer,address,undefined and runs it from the seed corpus for SECONDS.
#   tools/fuzz/control.sh [--out DIR] [--seconds N] [--jobs N] [--build-only] [-- LIBFUZZER ARGS]
# DIR (default build/fuzz) gets the binary, the grown corpus (corpus/), crashes (crash-*)
# and the log (control.log); the last lines of the log carry the exec count.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
out="$here/build/fuzz"
seconds=180
jobs=1
build_only=0
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--build-only) build_only=1; shift ;;
	--) shift; break ;;
	-h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "control.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
cxx=""
for c in clang++ clang++-19 clang++-16 clang++-14; do
	if command -v "$c" >/dev/null; then cxx=$c; break; fi
done
[ -n "$cxx" ] || { echo "control.sh: clang++ not found; apt-get install clang" >&2; exit 77; }
mkdir -p "$out/corpus"
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }' |
	"$cxx" -x c++ -fsanitize=fuzzer -o "$out/probe" - 2>/dev/null; then
	echo "control.sh: $cxx cannot link -fsanitize=fuzzer (libclang_rt.fuzzer missing); install clang's compiler-rt" >&2
	exit 77
fi
rm -f "$out/probe"
"$cxx" -std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$here" \
	"$here/tests/kvfdpd/fuzz_control.cpp" "$here/tests/kvfdpd/fuzz_control_check.cpp" \
	"$here/kvfdpd/daemon/ctl/control_proto.cpp" "$here"/proto/*.cpp -o "$out/fuzz_control"
echo "control.sh: built $out/fuzz_control ($cxx)"
[ "$build_only" = 1 ] && exit 0
cd "$out"
par=""
[ "$jobs" -gt 1 ] && par="-jobs=$jobs -workers=$jobs"
# The seeds are read-only inputs; new coverage goes to corpus/. ($par: zero or two words.)
# shellcheck disable=SC2086
ASAN_OPTIONS=detect_leaks=1 ./fuzz_control -max_total_time="$seconds" -max_len=70000 -timeout=10 \
	-rss_limit_mb=2048 $par -print_final_stats=1 \
	-dict="$here/tools/fuzz/control.dict" "$@" corpus "$here/tests/kvfdpd/fuzz_corpus" 2>&1 | tee control.log |
	grep -E '^#[0-9]+.*(INITED|DONE|REDUCE|NEW)|stat::|ERROR|SUMMARY|fuzz_control:' | tail -n 20
status=0
ls crash-* leak-* timeout-* oom-* >/dev/null 2>&1 && status=1
[ $status = 0 ] && echo "control.sh: no crash in ${seconds}s" || echo "control.sh: findings in $out (crash-*/leak-*/timeout-*/oom-*)"
exit $status
