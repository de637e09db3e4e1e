#!/bin/sh
# smoke: FDP NVMe devices and configuration, the plain namespace, ublk_drv (6.12), guest tools and a project BPF program.
# vm-args: --lba 4096 --nruh 8 --runs 1M --plain-ns 64M --timeout 180
. /lib/kvfdp/vm-lib.sh

step "NVMe devices"
check "/dev/nvme0 is a character device" test -c /dev/nvme0
check "/dev/nvme0n1 is a block device" test -b /dev/nvme0n1
check "/dev/ng0n1 is a character device" test -c /dev/ng0n1
expect_eq "nvme0 is the FDP controller" "$(tr -d ' ' < /sys/class/nvme/nvme0/serial)" kvfdp-fdp
expect_eq "nvme0n1 logical block size" "$(cat /sys/block/nvme0n1/queue/logical_block_size)" "$KVFDP_LBA"
expect_eq "nvme0n1 size in bytes" "$(($(cat /sys/block/nvme0n1/size) * 512))" "$(size_bytes "$KVFDP_NSZE")"
if [ "$KVFDP_PLAIN" = 1 ]; then
	check "/dev/nvme1n1 is a block device" test -b /dev/nvme1n1
	check "/dev/ng1n1 is a character device" test -c /dev/ng1n1
	expect_eq "nvme1 is the plain controller" "$(tr -d ' ' < /sys/class/nvme/nvme1/serial)" kvfdp-plain
fi
nvme list

step "FDP configuration (log 0x20) and RUH status"
nvme fdp configs /dev/nvme0 -e 1
nvme fdp configs /dev/nvme0 -e 1 -o json > /tmp/configs.json
check "nvme fdp configs reads the log" test -s /tmp/configs.json
nruh=$(json_num nruh /tmp/configs.json)
expect_eq "configured handles (nruh)" "$nruh" "$KVFDP_NRUH"
expect_eq "reclaim groups (nrg)" "$(json_num nrg /tmp/configs.json)" "$KVFDP_NRG"
expect_eq "reclaim unit size (runs)" "$(json_num runs /tmp/configs.json)" "$(size_bytes "$KVFDP_RUNS")"
expect_eq "configuration valid (fdpa bit 7)" "$(( $(json_num fdpa /tmp/configs.json) >> 7 & 1 ))" 1
nvme fdp status /dev/ng0n1 -o json > /tmp/status.json
check "nvme fdp status reads RUH status" test -s /tmp/status.json
nruhsd=$(json_num nruhsd /tmp/status.json)
expect_eq "RUH status descriptors" "$nruhsd" "$((KVFDP_NRUH * KVFDP_NRG))"
ruamw=$(json_num ruamw /tmp/status.json)
expect_eq "RUAMW of a fresh handle = runs / lba" "$ruamw" "$(($(size_bytes "$KVFDP_RUNS") / KVFDP_LBA))"
feat=$(nvme get-feature /dev/nvme0 -f 0x1d -c 1 2>&1)
echo "$feat"
fval=$(echo "$feat" | sed -n 's/.*[Vv]alue: *\(0x[0-9a-fA-F]*\).*/\1/p' | head -n 1)
expect_eq "FDP enabled (Get Features 0x1D bit 0)" "$(( ${fval:-0} & 1 ))" 1

step "ublk"
if [ "$KVFDP_UBLK" = 0 ]; then
	check "KVFDP_UBLK=0 only where the kernel has no ublk_drv (bookworm's 6.1 cloud kernel)" sh -c \
		"! grep -q 'ublk_drv' /lib/modules/$(uname -r)/modules.dep /lib/modules/$(uname -r)/modules.builtin 2>/dev/null"
else
	expect_eq "KVFDP_UBLK" "$KVFDP_UBLK" 1
	check "ublk_drv is loaded" sh -c 'grep -q "^ublk_drv " /proc/modules'
	check "/dev/ublk-control is a character device" test -c /dev/ublk-control
fi

step "guest tools run"
check "nvme-cli" nvme version
check "mkfs.xfs" mkfs.xfs -V
check "mkfs.ext4" sh -c 'mkfs.ext4 -V 2>&1 | grep -q "^mke2fs"'
check "fio" fio --version
check "bpftool" bpftool version
check "xfs module loads" modprobe xfs
check "mq-deadline is available (a module or built in)" modprobe mq-deadline

step "project BPF program in the guest kernel"
check "kernel BTF present" test -s /sys/kernel/btf/vmlinux
need test_bpf_pipeline
test_bpf_pipeline
bpf_rc=$?
expect_eq "test_bpf_pipeline passes (0, not a 77 skip)" "$bpf_rc" 0

check "bpftool loads the project's hint_probe.bpf.o" bpftool prog loadall /opt/kvfdp/bpf/hint_probe.bpf.o /sys/fs/bpf/hint_probe
check "the loaded program is pinned" test -n "$(ls /sys/fs/bpf/hint_probe 2>/dev/null)"
rm -rf /sys/fs/bpf/hint_probe

cat > "$OUT/smoke.json" <<JSON
{"kernel": $(json_str "$(uname -r)"), "lba": $KVFDP_LBA, "nruh": ${nruh:-null}, "nruhsd": ${nruhsd:-null},
 "runs": $(size_bytes "$KVFDP_RUNS"), "ruamw0": ${ruamw:-null}, "plain": $KVFDP_PLAIN, "bpf_rc": $bpf_rc,
 "failed_checks": $KVFDP_FAILED}
JSON
finish
