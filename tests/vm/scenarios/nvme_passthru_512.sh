#!/bin/sh
# nvme_passthru_512: the kvfdp_nvme passthrough checks on a 512-byte-LBA FDP namespace with 4 handles.
# vm-args: --lba 512 --nruh 4 --timeout 240
. /lib/kvfdp/vm-lib.sh
need kvfdp-nvme-vmcheck

step "passthrough checks on /dev/ng0n1 ($KVFDP_NRUH handles, LBA $KVFDP_LBA)"
mkdir -p "$OUT/fixtures"
check "kvfdp-nvme-vmcheck passes" kvfdp-nvme-vmcheck /dev/ng0n1 --nruh "$KVFDP_NRUH" --capture "$OUT/fixtures"
finish
