#!/bin/sh
# bpf_tagger: the BPF tagger in the guest (6.12, or 6.1 with --kernel 6.1) on the FDP namespace with XFS and ext4 (the host test binary, pointed at /dev/nvme0n1, whose requests issue on its hidden multipath path disk), writer identities and the bounded inode maps (test_bpf_identity), and `kvfdp record` on the raw disk.
# vm-args: --lba 4096 --nsze 1G --timeout 180
. /lib/kvfdp/vm-lib.sh

need test_tagger test_bpf_identity
modprobe xfs 2>/dev/null

step "the namespace's request disks (NVMe multipath: the head nvme0n1 has no queues)"
for d in /sys/block/nvme*; do
	echo "$(basename "$d"): dev=$(cat "$d/dev" 2>/dev/null) hidden=$(cat "$d/hidden" 2>/dev/null) nsid=$(cat "$d/nsid" 2>/dev/null) queues=$(ls "$d/mq" 2>/dev/null | wc -l)"
done

step "tagger: hinted buffered and O_DIRECT writes, directory rule, unlink lifetimes, record (xfs, ext4)"
export KVFDP_BPF_TEST_DISK=/dev/nvme0n1
test_tagger > "$OUT/test_tagger.log" 2>&1
rc=$?
cat "$OUT/test_tagger.log"
expect_eq "test_tagger exit status (77 = skipped)" "$rc" 0
grep "active sources" "$OUT/test_tagger.log" | sed 's/.*MESSAGE: //' > "$OUT/sources.txt"
grep -e "requests of" -e "requests by source" "$OUT/test_tagger.log" | sed 's/.*MESSAGE: //' >> "$OUT/sources.txt"
echo "kernel $(uname -r)" >> "$OUT/sources.txt"
echo "--- active sources"; cat "$OUT/sources.txt"
check "both filesystems ran (xfs and ext4 sources lines)" test "$(grep -c 'active sources' "$OUT/sources.txt")" -eq 2
check "an unlink hook is attached" sh -c "! grep -q 'unlink=none' '$OUT/sources.txt'"
# Debian's kernels allow fentry/fexit: the syscall tracepoints (syscall tracing for every task) stay detached
check "hint events by fexit/__x64_sys_fcntl" grep -q "hint-events(fexit/__x64_sys_fcntl)" "$OUT/sources.txt"
check "create events by fentry/security_file_open" grep -q "create-events(fentry/security_file_open)" "$OUT/sources.txt"
check "the requests were found on the hidden path disk" grep -q "nvme0c0n1 (hidden" "$OUT/sources.txt"

step "writer identity: a restarted kubelet-named pod keeps its id from its first file (the directory's provisional id, in BPF); a create + rename storm keeps directory rules applying (ext4)"
test_bpf_identity > "$OUT/test_identity.log" 2>&1
rc=$?
cat "$OUT/test_identity.log"
expect_eq "test_bpf_identity exit status (77 = skipped)" "$rc" 0
grep -q "rename=kprobe/vfs_rename" "$OUT/test_identity.log" && echo "rename hook: kprobe/vfs_rename" >> "$OUT/sources.txt"
unset KVFDP_BPF_TEST_DISK

step "kvfdp record on the raw namespace"
kvfdp record --disk /dev/nvme0n1 --out "$OUT/trace.csv" 2> "$OUT/record.err" &
pid=$!
# The header is written (and flushed) once the tagger is attached; stop waiting if it died.
header() { grep -q '^t_us,op,slba,nlb,class,writer$' "$OUT/trace.csv"; }
wait_until 60 sh -c "grep -q '^t_us,op' '$OUT/trace.csv' || ! kill -0 $pid"
if check "kvfdp record wrote its header" header; then
	dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=4 seek=8 oflag=direct 2>/dev/null
	blkdiscard -o $((64 << 20)) -l $((1 << 20)) /dev/nvme0n1 2>/dev/null
	# Rows are flushed after each batch: wait for the discard's row, then stop.
	wait_until 30 grep -q ',D,16384,' "$OUT/trace.csv"
	kill -INT $pid
fi
wait $pid
expect_eq "kvfdp record exit status" "$?" 0
cat "$OUT/record.err"
w=$(awk -F, '$2 == "W" && $3 >= 2048 && $3 < 3072 { n += $4 } END { print n + 0 }' "$OUT/trace.csv")
expect_eq "4096-byte LBAs written at 8 MiB (4 MiB)" "$w" 1024
d=$(awk -F, '$2 == "D" && $3 >= 16384 && $3 < 16640 { n += $4 } END { print n + 0 }' "$OUT/trace.csv")
expect_eq "4096-byte LBAs discarded at 64 MiB (1 MiB)" "$d" 256
check "every row has op W or D and class 0-5" awk -F, 'NR > 1 && ($2 !~ /^[WD]$/ || $5 < 0 || $5 > 5) { bad = 1 } END { exit bad }' "$OUT/trace.csv"
finish
