#!/bin/sh
# nvme_passthru: kvfdp_nvme against QEMU's FDP namespace: discovery, placed writes per handle, stats, split I/O, decoded statuses, discovery errors.
# vm-args: --lba 4096 --nruh 8 --plain-ns 64M --timeout 240
. /lib/kvfdp/vm-lib.sh
need kvfdp-nvme-vmcheck

step "passthrough checks on /dev/ng0n1 ($KVFDP_NRUH handles, LBA $KVFDP_LBA)"
mkdir -p "$OUT/fixtures"
check "kvfdp-nvme-vmcheck passes" kvfdp-nvme-vmcheck /dev/ng0n1 --nruh "$KVFDP_NRUH" --capture "$OUT/fixtures"
nvme fdp status /dev/ng0n1 -o json > "$OUT/fixtures/nvme_fdp_status.json" 2>&1

step "discovery errors say what to do"
check "a block device points at its ng device" kvfdp-nvme-vmcheck --expect-error "use /dev/ng0n1" /dev/nvme0n1
check "a controller points at a namespace" kvfdp-nvme-vmcheck --expect-error "/dev/ng0n1" /dev/nvme0
check "a missing device is named" kvfdp-nvme-vmcheck --expect-error "/dev/ng7n7" /dev/ng7n7
if [ "$KVFDP_PLAIN" = 1 ]; then
	check "a namespace without FDP says CTRATT bit 19 and --backend model" \
		kvfdp-nvme-vmcheck --expect-error "CTRATT bit 19 clear: this drive has no FDP; use --backend model" /dev/ng1n1
fi
finish
