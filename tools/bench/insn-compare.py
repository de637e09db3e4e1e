#!/usr/bin/env python3
"""How far bench_insn runs of the same command agree, figure by figure.

Usage: tools/bench/insn-compare.py OUTDIR OUTDIR... [--round R]
Each OUTDIR is a bench_insn run's out dir (its insn.json, written by bench_insn.check). For every target
and job that all runs have, prints each run's guest instructions per request (kernel + user; * where
the check flagged the row) and the spread, (largest - smallest) / smallest, of the totals and of the
user parts; then how many figures are within 1% and the median spread. Exit 0 whatever the spread:
it reports, it does not judge.
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description="how far bench_insn runs of the same command agree")
    ap.add_argument("outdirs", nargs="+", metavar="OUTDIR")
    ap.add_argument("--round", type=int, default=1)
    args = ap.parse_args()
    if len(args.outdirs) < 2:
        ap.error("two or more OUTDIRs")
    rnd = args.round
    runs = []
    for out in args.outdirs:
        path = os.path.join(out, "insn.json")
        if not os.path.exists(path):
            sys.exit(f"insn-compare.py: no {path} (bench_insn.check writes it)")
        runs.append({(r["target"], r["job"]): r for r in json.load(open(path))["rows"] if r["round"] == rnd})
    keys = [k for k in runs[0] if all(k in run for run in runs[1:])]
    if not keys:
        sys.exit("insn-compare.py: the runs have no target and job in common")
    spreads = []
    print(f"{'target':<12} {'job':<15} {'per request, each run':<40} {'spread':>7} {'user spread':>11}")
    for k in keys:
        rows = [run[k] for run in runs]
        totals = [r["total"] for r in rows]
        users = [r["user"] for r in rows]
        spread = (max(totals) - min(totals)) / min(totals)
        uspread = (max(users) - min(users)) / min(users)
        spreads.append(spread)
        cells = " / ".join(f"{r['total']:.0f}{'*' if r.get('disturbed') else ''}" for r in rows)
        print(f"{k[0]:<12} {k[1]:<15} {cells:<40} {100 * spread:6.2f}% {100 * uspread:10.2f}%")
    spreads.sort()
    within = sum(1 for s in spreads if s <= 0.01)
    median = spreads[len(spreads) // 2] if len(spreads) % 2 else (spreads[len(spreads) // 2 - 1] + spreads[len(spreads) // 2]) / 2
    print(f"{within} of {len(spreads)} figures within 1%; median spread {100 * median:.2f}%, "
          f"largest {100 * spreads[-1]:.2f}%")


if __name__ == "__main__":
    main()
