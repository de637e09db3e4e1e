#!/usr/bin/env python3
"""Where a bench_insn request's guest instructions go, by kernel function.

Usage: tools/bench/insn-profile.py OUTDIR TARGET JOB [--top N]
OUTDIR is a bench_insn run's out dir made with `tools/bench/vm-insn.sh --profile` (the plugin's
profile-SEQ.txt files in OUTDIR/plugin, the guest's kallsyms.txt, bench-phases.txt). For TARGET and
JOB it takes the profile of the N2 bracket minus that of the N1 bracket over N2 - N1, so fio's start
and exit cancel as in the table (with repeated brackets, the two the table used: round 1's in
insn.json, else the first repeat's), and names each block's start address with the guest's kallsyms
(user-space addresses are one row, [user]). Prints instructions per request by function and by
area (the function's module, or a prefix: io_uring, blk, nvme, sched, ...). Block counts are
approximate (a block cut short counts whole); the table's figures are the exact ones.
"""
import bisect
import collections
import json
import os
import sys

KERNEL_BASE = 0xFFFF800000000000
AREAS = (("native_queued_spin_lock_slowpath", "spin (waiting for another vCPU)"),
         # the BPF tagger: its programs, their probe reads, the syscall tracepoints it enables
         ("bpf_prog_", "bpf tagger"), ("bpf", "bpf tagger"), ("__bpf", "bpf tagger"),
         ("copy_from_kernel_nofault", "bpf tagger"), ("syscall_trace_enter", "syscall tracepoints"),
         ("syscall_exit_work", "syscall tracepoints"), ("perf_syscall_", "syscall tracepoints"),
         ("trace_", "syscall tracepoints"),
         ("io_uring", "io_uring"), ("io_", "io_uring"), ("__io_", "io_uring"), ("blk_", "block"),
         ("__blk_", "block"), ("bio_", "block"), ("submit_bio", "block"), ("nvme_", "nvme"),
         ("ublk_", "ublk"),
         # the scheduler: a sleep and a wake-up
         ("schedule", "scheduler"), ("__schedule", "scheduler"), ("pick_", "scheduler"),
         ("__pick", "scheduler"), ("enqueue_", "scheduler"), ("dequeue_", "scheduler"),
         ("__enqueue", "scheduler"), ("__dequeue", "scheduler"), ("update_", "scheduler"),
         ("__update_load", "scheduler"), ("avg_vruntime", "scheduler"), ("vruntime", "scheduler"),
         ("set_next_entity", "scheduler"), ("put_prev", "scheduler"), ("psi_", "scheduler"),
         ("try_to_wake_up", "scheduler"), ("ttwu", "scheduler"), ("select_task_rq", "scheduler"),
         ("check_preempt", "scheduler"), ("wake_up", "scheduler"), ("__wake_up", "scheduler"),
         ("finish_task_switch", "scheduler"), ("__switch_to", "scheduler"), ("switch_mm", "scheduler"),
         ("native_sched_clock", "scheduler"), ("sched_clock", "scheduler"), ("rcu_note_context", "scheduler"),
         ("reweight", "scheduler"), ("place_entity", "scheduler"), ("dl_server", "scheduler"),
         ("futex", "futex"), ("__futex", "futex"), ("get_futex", "futex"),
         ("task_work", "task_work"), ("irq", "irq"), ("__irq", "irq"), ("handle_", "irq"),
         ("sysvec_", "irq"), ("asm_", "entry"), ("entry_", "entry"), ("do_syscall", "entry"),
         ("syscall_", "entry"), ("x64_sys", "entry"), ("__x64_sys", "entry"), ("exit_to_user", "entry"),
         ("__rseq", "entry"), ("rseq", "entry"), ("hrtimer", "timers"), ("__hrtimer", "timers"),
         ("tick_", "timers"), ("timer", "timers"), ("ktime_", "timers"), ("lock_timer", "timers"),
         ("__try_to_del_timer", "timers"), ("timekeeping", "timers"), ("__timekeeping", "timers"),
         ("memcpy", "copy"), ("copy_", "copy"), ("rep_movs", "copy"), ("gup_", "pin pages"),
         ("kmem_", "alloc"), ("kfree", "alloc"), ("__kmalloc", "alloc"), ("mempool", "alloc"),
         ("native_", "arch"), ("default_idle", "idle"), ("cpuidle", "idle"), ("do_idle", "idle"),
         ("_raw_spin", "locks"), ("queued_spin", "locks"), ("mutex_", "locks"), ("__rcu", "rcu"),
         ("rcu_", "rcu"), ("fput", "vfs"), ("fget", "vfs"), ("__fget", "vfs"), ("rw_verify", "vfs"),
         ("refresh_cpu_vm_stats", "vmstat"), ("quiet_vmstat", "vmstat"))


def area_of(name, module):
    if module:
        return module
    for prefix, area in AREAS:
        if name.startswith(prefix):
            return area
    return "other"


def main():
    args = sys.argv[1:]
    top = 40
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 3:
        sys.exit("usage: insn-profile.py OUTDIR TARGET JOB [--top N]")
    out, target, job = args
    ksyms = []
    for line in open(os.path.join(out, "kallsyms.txt")):
        f = line.split()
        if len(f) >= 3 and f[1] in "tTwW":
            ksyms.append((int(f[0], 16), f[2], f[3].strip("[]") if len(f) > 3 else ""))
    ksyms.sort()
    if not ksyms or ksyms[-1][0] == 0:
        sys.exit("insn-profile.py: kallsyms.txt has no addresses (kptr_restrict?)")
    addrs = [a for a, _, _ in ksyms]
    phases = [l.split() for l in open(os.path.join(out, "bench-phases.txt")) if l.strip()]

    def load(seq):
        p = os.path.join(out, "plugin", f"profile-{seq}.txt")
        d = collections.Counter()
        if seq == 0:
            return d
        if not os.path.exists(p):
            sys.exit(f"insn-profile.py: no {p}: was the run made with vm-insn.sh --profile?")
        for line in open(p):
            a, n = line.split()
            d[int(a, 16)] += int(n)
        return d

    def phase(i):  # phase i (0-based): its end mark is 2i+2; profiles are cumulative
        cur, prev = load(2 * i + 2), load(2 * i)
        cur.subtract(prev)
        return cur

    idx = {}
    for i, label in enumerate(phases):
        if label[0] == target and label[1] == job:
            idx.setdefault(int(label[2]), i)
    if len(idx) != 2:
        sys.exit(f"insn-profile.py: {target} {job}: need the two brackets (N1, N2), found {len(idx)}")
    n1, n2 = sorted(idx)
    table = os.path.join(out, "insn.json")
    if os.path.exists(table):
        for r in json.load(open(table))["rows"]:
            if r["round"] == 1 and r["target"] == target and r["job"] == job and "bracket_n1" in r:
                idx = {n1: r["bracket_n1"], n2: r["bracket_n2"]}
    diff = phase(idx[n2])
    diff.subtract(phase(idx[n1]))
    by_fn = collections.Counter()
    by_area = collections.Counter()
    for a, n in diff.items():
        if a < KERNEL_BASE:
            name, area = "[user]", "user"
        else:
            k = bisect.bisect_right(addrs, a) - 1
            name, module = (ksyms[k][1], ksyms[k][2]) if k >= 0 else ("?", "")
            area = area_of(name, module)
            if module:
                name += f" [{module}]"
        by_fn[name] += n
        by_area[area] += n
    per = n2 - n1
    total = sum(by_fn.values()) / per
    print(f"{target} {job}: about {total:.0f} guest instructions per request by block profile "
          f"(N {n1} and {n2}); kernel {os.path.basename(os.path.dirname(os.path.abspath(out)))}")
    print("by area:")
    for a, n in by_area.most_common():
        if abs(n / per) >= 1:
            print(f"  {n / per:9.0f}  {100 * n / per / total:5.1f}%  {a}")
    print(f"top {top} functions:")
    for name, n in by_fn.most_common(top):
        print(f"  {n / per:9.0f}  {100 * n / per / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
