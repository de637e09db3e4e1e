#!/bin/sh
# nvme_passthru_512: the kvfdp_nvme passthrough checks on a 512-byte-LBA FDP namespace with 4 handles.
# vm-args: --lba 512 --nruh 4 --timeout 240
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
finish
