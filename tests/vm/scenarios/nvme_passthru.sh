#!/bin/sh
# nvme_passthru: kvfdp_nvme against QEMU's FDP namespace: discovery, placed writes per handle, stats, split I/O, decoded statuses, discovery errors.
# vm-args: --lba 4096 --nruh 8 --plain-ns 64M --timeout 240
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
if [ "$KVFDP_PLAIN" = 1 ]; then
	check "a namespace without FDP says CTRATT bit 19 and --backend model" \
		kvfdp-nvme-vmcheck --expect-error "CTRATT bit 19 clear: this drive has no FDP; use --backend model" /dev/ng1n1
fi
finish
