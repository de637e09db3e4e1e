#!/usr/bin/env bash
# The kvfdp demo: replay the Mooncake KV-cache trace through an LMCache-like chunk store
# onto the FDP SSD model, and print the WAF without placement, with hints and with an
# oracle, then the model's placement handles after each run.
# Run by `./tools/dev.sh demo` after setup + build (BUILD_DIR set). Env: TRACE (a Mooncake
# .jsonl or .jsonl.gz), DEMO_UTIL (default 1), DEMO_OP (default 0.07).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
KVFDP=$BUILD_DIR/bin/kvfdp
TRACE=${TRACE:-$ROOT/tools/workload/data/mooncake-conversation.jsonl.gz}
UTIL=${DEMO_UTIL:-1}
OP=${DEMO_OP:-0.07}

say() { printf '== %s\n' "$*" >&2; }

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
*.gz) gzip -dc "$TRACE" >"$tmp/trace.jsonl"; trace=$tmp/trace.jsonl ;;
*) trace=$TRACE ;;
esac

# The model: 4 GiB logical, 7% OP, 16 MiB reclaim units, 8 handles. Chunks: Llama-3.1-8B
# bf16 (64 MiB per 512-token block) scaled by 1/256 to 256 KiB, so an RU holds 64 chunks
# and the store about 16,000 of them, as in a TB drive with GiB RUs and 64 MiB chunks.
args=(simulate --kv-trace "$trace" --kv-model llama-3.1-8b --kv-scale 1/256
	--capacity 4GiB --op "$OP" --util "$UTIL" --ru-size 16MiB --handles 8)
say "Mooncake conversation trace: $(wc -l <"$trace") requests -> chunk store at ${UTIL} of 4 GiB, OP ${OP}"
say "placements none, hint, oracle (oracle replays the trace twice: a lifetime pre-pass, then the run)"
start=$(date +%s)
"$KVFDP" "${args[@]}" --placement all --ruh
say "done in $(( $(date +%s) - start )) s"
say "WAF = media bytes / host bytes after the store first fills (warm-up excluded)."
say "The handle tables are the model's RUH state at the end of each run (the model lives inside"
say "simulate, so \`kvfdp ruh --backend model\` would show a fresh model; simulate --ruh prints it)."
say "Why hint does not beat none here, and what would: docs/RESULTS.md"
