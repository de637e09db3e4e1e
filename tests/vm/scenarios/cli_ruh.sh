#!/bin/sh
# cli_ruh: `kvfdp ruh --device /dev/ng0n1 -o json` agrees with `nvme fdp status` on pid, ruhid and ruamw, before and after placed writes; captures a real status/ruh/stats session for the README.
# vm-args: --lba 4096 --nruh 8 --runs 1M --nsze 1G --plain-ns 64M --timeout 180
. /lib/kvfdp/vm-lib.sh
need kvfdp nvme

# The values of one key, in document order, on one line ("0 1 2 ...").
values() { grep -o "\"$1\" *: *[0-9]*" "$2" | sed 's/.*: *//' | tr '\n' ' '; }

agree() {
	tag=$1
	nvme fdp status /dev/ng0n1 -o json > "$OUT/nvme_$tag.json"; _rc=$?
	expect_eq "nvme fdp status ($tag) exits 0" "$_rc" 0
	kvfdp ruh --device /dev/ng0n1 -o json > "$OUT/kvfdp_$tag.json"; _rc=$?
	expect_eq "kvfdp ruh -o json ($tag) exits 0" "$_rc" 0
	check "kvfdp ruh -o json ($tag) printed JSON" grep -q '"ruhss"' "$OUT/kvfdp_$tag.json"
	for k in pid ruhid ruamw; do
		a=$(values $k "$OUT/nvme_$tag.json")
		b=$(values $k "$OUT/kvfdp_$tag.json")
		echo "$tag $k nvme: $a"
		echo "$tag $k kvfdp: $b"
		check "$k agrees with nvme fdp status ($tag)" test -n "$a" -a "$a" = "$b"
	done
	expect_eq "nruhsd agrees ($tag)" "$(json_num nruhsd "$OUT/kvfdp_$tag.json")" "$(json_num nruhsd "$OUT/nvme_$tag.json")"
}

step "before placed writes"
agree before

step "placed writes: 7 LBAs on PID 2, 3 LBAs on PID 5"
dd if=/dev/urandom of=/tmp/data bs=4096 count=7 2>/dev/null
check "7 LBAs on PID 2" nvme write /dev/nvme0n1 --start-block=1024 --block-count=6 --data-size=28672 --data=/tmp/data --dir-type=2 --dir-spec=2
check "3 LBAs on PID 5" nvme write /dev/nvme0n1 --start-block=4096 --block-count=2 --data-size=12288 --data=/tmp/data --dir-type=2 --dir-spec=5

step "after placed writes"
agree after
r2b=$(values ruamw "$OUT/kvfdp_before.json" | cut -d' ' -f3)
r2a=$(values ruamw "$OUT/kvfdp_after.json" | cut -d' ' -f3)
expect_eq "handle 2 RUAMW dropped by the 7 LBAs written" "$((r2b - r2a))" 7

step "a real session (for the README)"
{
	echo '$ kvfdp status --device /dev/ng0n1'
	kvfdp status --device /dev/ng0n1 --width 100 2>&1
	echo
	echo '$ kvfdp ruh --device /dev/ng0n1'
	kvfdp ruh --device /dev/ng0n1 --width 100 2>&1
	echo
	echo '$ kvfdp stats --device /dev/ng0n1'
	kvfdp stats --device /dev/ng0n1 --width 100 2>&1
} > "$OUT/session.txt"
cat "$OUT/session.txt"
check "the session has the emulation caveat" grep -q "emulated drive (QEMU)" "$OUT/session.txt"
kvfdp stats --device /dev/ng0n1 -o json > "$OUT/stats.json"
check "stats JSON withholds WAF on QEMU" grep -q '"waf": null' "$OUT/stats.json"

step "kvfdp configs: the one configuration QEMU was given"
kvfdp configs --device /dev/ng0n1 > "$OUT/configs.txt" 2>&1; rc=$?
cat "$OUT/configs.txt"
expect_eq "kvfdp configs exits 0" "$rc" 0
check "configs: one configuration, FDP enabled" grep -qx '/dev/ng0n1: 1 FDP configuration(s), FDP enabled' "$OUT/configs.txt"
# CFG ACTIVE VALID RGIF NRG NRUH MAXPIDS RU_SIZE: config 0 active and valid, --nrg/--nruh/--runs
check "configs: config 0 active, valid, $KVFDP_NRG group(s), $KVFDP_NRUH handles, RU $KVFDP_RUNS" \
	grep -qE "^ +0 +yes +yes +[0-9]+ +$KVFDP_NRG +$KVFDP_NRUH +[0-9]+ +1\.00 MiB " "$OUT/configs.txt"
expect_eq "configs: one usage row per handle" \
	"$(grep -cE '^ +[0-9]+ +initially-isolated +host-specified$' "$OUT/configs.txt")" "$KVFDP_NRUH"

step "kvfdp events: what the log holds, text and JSON agree"
kvfdp events --device /dev/ng0n1 > "$OUT/events.txt" 2>&1; rc=$?
cat "$OUT/events.txt"
expect_eq "kvfdp events exits 0" "$rc" 0
kvfdp events --device /dev/ng0n1 -o json > "$OUT/events.json" 2>&1; rc=$?
cat "$OUT/events.json"
expect_eq "kvfdp events -o json exits 0" "$rc" 0
nev=$(json_num nevents "$OUT/events.json")
check "events -o json has nevents" test -n "$nev"
if [ "${nev:-x}" = 0 ]; then
	check "events: an empty log is said so" grep -qx '/dev/ng0n1: no FDP events logged' "$OUT/events.txt"
else
	check "events: the text lists them" test "$(wc -l < "$OUT/events.txt")" -gt "${nev:-0}"
fi

step "a namespace without FDP is refused with the bit named"
if [ -c /dev/ng1n1 ]; then
	kvfdp ruh --device /dev/ng1n1 > /tmp/plain.out 2>&1; rc=$?
	cat /tmp/plain.out
	expect_eq "exit code for no FDP" "$rc" 4
	check "the error names CTRATT bit 19" grep -q "CTRATT bit 19" /tmp/plain.out
fi
finish
