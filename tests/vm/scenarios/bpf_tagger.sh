#!/bin/sh
# bpf_tagger: the BPF tagger in the 6.12 guest on the FDP namespace with ext4 and XFS (the host test binary, pointed at /dev/nvme0n1), and `kvfdp record` on the raw disk.
# vm-args: --lba 4096 --nsze 1G --timeout 240
. /lib/kvfdp/vm-lib.sh

need test_tagger
modprobe xfs 2>/dev/null

step "tagger: hinted buffered and O_DIRECT writes, directory rule, unlink lifetimes, record (ext4, xfs)"
export KVFDP_BPF_TEST_DISK=/dev/nvme0n1
test_tagger > "$OUT/test_tagger.log" 2>&1
rc=$?
cat "$OUT/test_tagger.log"
expect_eq "test_tagger exit status (77 = skipped)" "$rc" 0
grep "active sources" "$OUT/test_tagger.log" > "$OUT/sources.txt"
check "both filesystems ran (ext4 and xfs sources lines)" test "$(wc -l < "$OUT/sources.txt")" -eq 2
check "the unlink hook is the BPF LSM" grep -q "unlink=lsm/inode_unlink" "$OUT/sources.txt"
unset KVFDP_BPF_TEST_DISK

step "kvfdp record on the raw namespace"
if kvfdp record --help >/dev/null 2>&1; then
	kvfdp record --disk /dev/nvme0n1 --out "$OUT/trace.csv" 2> "$OUT/record.err" &
	pid=$!
	# The header is written once the tagger is attached.
	wait_until 30 grep -q '^t_us,op,slba,nlb,class$' "$OUT/trace.csv"
	dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=4 seek=8 oflag=direct 2>/dev/null
	blkdiscard -o $((64 << 20)) -l $((1 << 20)) /dev/nvme0n1 2>/dev/null
	kill -INT $pid
	wait $pid
	expect_eq "kvfdp record exit status" "$?" 0
	cat "$OUT/record.err"
	w=$(awk -F, '$2 == "W" && $3 >= 2048 && $3 < 3072 { n += $4 } END { print n + 0 }' "$OUT/trace.csv")
	expect_eq "4096-byte LBAs written at 8 MiB (4 MiB)" "$w" 1024
	check "every row has op W or D and class 0-5" awk -F, 'NR > 1 && ($2 !~ /^[WD]$/ || $5 < 0 || $5 > 5) { bad = 1 } END { exit bad }' "$OUT/trace.csv"
else
	echo "kvfdp record is not built into this kvfdp; skipping the CLI check"
fi
finish
