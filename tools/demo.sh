#!/usr/bin/env bash
# The kvfdp demo: three hosts on the FDP SSD model, side by side, each under the five
# placements (none, hint, writer, learned, oracle), with one line per result saying what it
# means.
# - A shared host (`--workload host`): one KV engine's chunk store replaying the Mooncake
#   trace, plus a prefill->decode staging area (prompt KV deleted 2 s later), rotated logs
#   and a model-weights swap every 10 minutes, each its own writer.
# - A single Mooncake chunk store (`--kv-trace`): one writer.
# - A slot store (`--workload slots`): LMCache raw_block's nine workers rewriting fixed
#   slots, each its own writer and hint bucket (docs/RESULTS.md "Slot store").
# Then it plots WAF against utilisation for the shared host and the single store (simulate
# --sweep util=DEMO_SWEEP --plot), every placement, into $BUILD_DIR/demo/waf-util-{host,store}.svg;
# the two sweeps run side by side and take the demo from about 12 s to 50 s on 2 busy cores.
# Run by `./tools/dev.sh demo` after setup + build (BUILD_DIR set). Env: TRACE (a Mooncake
# .jsonl or .jsonl.gz), DEMO_UTIL (default 1), DEMO_OP (default 0.07), DEMO_SWEEP (default
# 0.80:1.00:0.05; "none" skips the plots). docs/RESULTS.md has the same runs with their
# commands; docs/placement.md explains the learner.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
KVFDP=$BUILD_DIR/bin/kvfdp
TRACE=${TRACE:-$ROOT/model/workload/data/mooncake-conversation.jsonl.gz}
UTIL=${DEMO_UTIL:-1}
OP=${DEMO_OP:-0.07}
SWEEP=${DEMO_SWEEP:-0.80:1.00:0.05}
PLOTS=$BUILD_DIR/demo

say() { printf '== %s\n' "$*"; }

if [ ! -x "$KVFDP" ]; then
	echo "demo: $KVFDP is missing; run ./tools/dev.sh build first (or set BUILD_DIR)" >&2
	exit 1
fi
if [ ! -r "$TRACE" ]; then
	echo "demo: trace $TRACE not readable; set TRACE=FILE.jsonl" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case "$TRACE" in
*.gz) trace=$tmp/$(basename "$TRACE" .gz); gzip -dc "$TRACE" >"$trace" ;;
*) trace=$TRACE ;;
esac

# The model: 4 GiB logical, 7% OP, 16 MiB reclaim units, 8 handles. Chunks: Llama-3.1-8B
# bf16 (64 MiB per 512-token block) scaled by 1/256 to 256 KiB, so an RU holds 64 chunks
# and the store about 16,000 of them, as in a TB drive with GiB RUs and 64 MiB chunks. The
# host's staging, logs and weights are scaled by the same 1/256.
model=(--kv-trace "$trace" --kv-model llama-3.1-8b --kv-scale 1/256
	--capacity 4GiB --op "$OP" --ru-size 16MiB --handles 8 --placement all)
common=("${model[@]}" --util "$UTIL")

say "Mooncake conversation trace: $(wc -l <"$trace") requests; model 4 GiB, OP ${OP}, utilisation ${UTIL}, 16 MiB RUs, 8 handles"
start=$(date +%s)
"$KVFDP" simulate --workload host "${common[@]}" >"$tmp/host.txt"
"$KVFDP" simulate "${common[@]}" >"$tmp/store.txt"
"$KVFDP" simulate --workload slots --kv-scale 1/256 --capacity 4GiB --op "$OP" --ru-size 16MiB \
	--handles 8 --placement all >"$tmp/slots.txt"

# WAF of a placement from simulate's table (PLACEMENT, HOST BYTES (2 fields), MEDIA BYTES
# (2 fields), WAF, ...).
waf() { awk -v p="$2" '$1 == p { print $6 }' "$1"; }
delta() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; printf "%+.3f", d }'; }

printf '\n%-10s %12s %14s %12s\n' PLACEMENT "SHARED HOST" "SINGLE STORE" "SLOT STORE"
for p in none hint writer learned oracle; do
	printf '%-10s %12s %14s %12s\n' "$p" "$(waf "$tmp/host.txt" $p)" "$(waf "$tmp/store.txt" $p)" "$(waf "$tmp/slots.txt" $p)"
done
printf '(WAF = media bytes / host bytes once every store is full; 1.000 = no garbage-collection copies)\n\n'

for host in host store slots; do
	f=$tmp/$host.txt
	n=$(waf "$f" none) h=$(waf "$f" hint) w=$(waf "$f" writer) l=$(waf "$f" learned) o=$(waf "$f" oracle)
	if [ "$host" = host ]; then
		say "shared host (engine + staging + logs + weights):"
	elif [ "$host" = slots ]; then
		say "slot store (LMCache raw_block's 9 workers at 89% use; hint = one bucket per workload, writer = one handle per worker):"
	else
		say "single Mooncake chunk store (one writer):"
	fi
	echo "  none    $n: every write on one handle; short-lived and long-lived data share reclaim units, GC copies what is still live"
	echo "  hint    $h ($(delta "$h" "$n") vs none): the class each file's writer sets, through the default class map"
	echo "  writer  $w ($(delta "$w" "$n") vs none): one handle per writer, whether or not their lifetimes differ"
	echo "  learned $l ($(delta "$l" "$n") vs none): kvfdp's learner: measured lifetimes per (writer, hint), split only where they differ 2x"
	echo "  oracle  $o: classes from when each file actually dies (lifetime quartiles over 4 handles): the reference, not a hard floor"
done
echo

# The plots: the same two hosts at each utilisation of the sweep, both at once (2 cores).
if [ "$SWEEP" != none ]; then
	mkdir -p "$PLOTS"
	say "WAF against utilisation ($SWEEP), every placement: the shared host and the single store"
	# The background run's stderr to a file: one progress bar on the terminal, not two.
	"$KVFDP" simulate --workload host "${model[@]}" --sweep "util=$SWEEP" --plot "$PLOTS/waf-util-host.svg" \
		>"$tmp/sweep-host.txt" 2>"$tmp/sweep-host.err" &
	host_pid=$!
	"$KVFDP" simulate "${model[@]}" --sweep "util=$SWEEP" --plot "$PLOTS/waf-util-store.svg" >"$tmp/sweep-store.txt"
	wait "$host_pid" || { cat "$tmp/sweep-host.err" >&2; exit 1; }
	printf '\nshared host:\n'
	cat "$tmp/sweep-host.txt"
	printf '\nsingle Mooncake chunk store:\n'
	cat "$tmp/sweep-store.txt"
	say "plots: $PLOTS/waf-util-host.svg, $PLOTS/waf-util-store.svg (open in a browser; rsvg-convert -o FILE.png FILE.svg for a PNG)"
fi
say "done in $(( $(date +%s) - start )) s. Each run's handles: add --ruh to a simulate command (docs/RESULTS.md lists them)."
