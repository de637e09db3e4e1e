#!/bin/sh
# nvme_passthru: kvfdp_nvme against QEMU's FDP namespace: discovery, placed writes per handle, stats, split and worst-case I/O, decoded statuses, discovery errors.
# vm-args: --lba 4096 --nruh 8 --plain-ns 64M --timeout 240
# Also run as vm_nvme_passthru_512 (--lba 512 --nruh 4) and vm_nvme_passthru_kernel61 (--kernel 6.1): tests/nvme/CMakeLists.txt.
. /lib/kvfdp/vm-lib.sh
need kvfdp-nvme-vmcheck

step "passthrough checks on /dev/ng0n1 ($KVFDP_NRUH handles, LBA $KVFDP_LBA)"
mkdir -p "$OUT/fixtures"
check "kvfdp-nvme-vmcheck passes" kvfdp-nvme-vmcheck /dev/ng0n1 --nruh "$KVFDP_NRUH" --capture "$OUT/fixtures"
# nvme-cli's view of the same state: the oracle the fixture tests compare the parsers with.
f=$OUT/fixtures
nvme fdp status /dev/ng0n1 -o json > "$f/nvme_fdp_status.json"
nvme fdp configs /dev/nvme0 -e 1 -o json > "$f/nvme_fdp_configs.json"
nvme fdp usage /dev/nvme0 -e 1 -o json > "$f/nvme_fdp_usage.json"
nvme fdp stats /dev/nvme0 -e 1 -o json > "$f/nvme_fdp_stats.json"
nvme id-ctrl /dev/nvme0 -o json > "$f/nvme_id_ctrl.json"
nvme id-ns /dev/ng0n1 -o json > "$f/nvme_id_ns.json"
check "nvme-cli read the oracle JSON" test -s "$f/nvme_fdp_stats.json"

step "discovery errors say what to do"
check "a block device points at its ng device" kvfdp-nvme-vmcheck --expect-error "use /dev/ng0n1" /dev/nvme0n1
check "a controller points at a namespace" kvfdp-nvme-vmcheck --expect-error "/dev/ng0n1" /dev/nvme0
check "an unprivileged user is told to run as root" kvfdp-nvme-vmcheck --expect-error "run as root" /dev/ng0n1 --as-uid 65534
check "a missing device is named" kvfdp-nvme-vmcheck --expect-error "/dev/ng7n7" /dev/ng7n7
# QEMU cannot disable FDP on a live endurance group (Set Features 0x1D is always a Command
# Sequence Error) nor give an FDP namespace zero handles (no fdp.ruhs: one controller-assigned
# handle), so "FDP disabled" and "no handles" from discovery are unit-tested only
# (test_nvme_discovery). This records the first half of that.
nvme set-feature /dev/nvme0 -f 0x1d -v 1 --cdw12=0 > /tmp/setfdp.txt 2>&1
cat /tmp/setfdp.txt
check "QEMU refuses to change FDP mode (Command Sequence Error)" grep -qF "(0x400c)" /tmp/setfdp.txt
if [ "$KVFDP_PLAIN" = 1 ]; then
	check "a namespace without FDP says CTRATT bit 19 and --backend model" \
		kvfdp-nvme-vmcheck --expect-error "/dev/nvme1: CTRATT bit 19 clear: this drive has no FDP; use --backend model to project WAF" /dev/ng1n1
	check "RUH Status on a namespace without FDP is decoded as FDP Disabled" \
		kvfdp-nvme-vmcheck --expect-ruh-error "I/O Management Receive (RUH Status): FDP is disabled on this namespace's endurance group: NVMe status 0x4029: FDP Disabled (SCT 0, SC 0x29, DNR)" /dev/ng1n1
fi
finish
