#!/bin/sh
# systemd_deb: the kvfdp .deb under Debian's systemd as PID 1 (tests/vm/run --systemd): apt-get install ./kvfdp_*.deb (Depends from the guest's apt repo; postinst makes the group); a missing, then a wrong KVFDPD_DEVICE fails the unit with one journal line naming what to set; so do a bad KVFDPD_OPTS (kvfdpd exits 2) and a kvfdp.toml that is a directory (exit 1), none restarted, no disk; enable --now waits for READY; XFS on /dev/ublkb0 through a mount unit ordered after kvfdpd; directory-rule and hinted writes; reload with a good then a bad policy (refused, old policy kept); an edited kvfdp.toml survives a reinstall; kill -9 of the main PID, restarted by systemd with --attach, while a writer writes: no I/O error, contents verify, xfs_repair clean; stop with the disk mounted (left, I/O held; start re-attaches), stop after unmount (removed); apt-get purge leaves no file, group, unit or enable link.
# vm-args: --systemd --lba 4096 --nruh 8 --runs 1M --nsze 1G --timeout 480
. /lib/kvfdp/vm-lib.sh
[ "${KVFDP_SYSTEMD:-0}" = 1 ] || die "systemd_deb runs under systemd: tests/vm/run systemd_deb --systemd (its vm-args say so)"
need_ublk
need apt-get dpkg dpkg-query systemctl journalctl getent mkfs.xfs xfs_repair kvfdp-daemon-vmtool
T=kvfdp-daemon-vmtool
export DEBIAN_FRONTEND=noninteractive
KILLS=${KVFDP_KILLS:-4}
DEB=$(ls /opt/kvfdp/debs/kvfdp_*.deb 2>/dev/null | head -n 1)
[ -n "$DEB" ] || die "no kvfdp_*.deb in /opt/kvfdp/debs (build-artefacts --systemd puts it there)"

# jcount PATTERN: lines of this boot's journal that match; journal_wait PATTERN N: until there are
# N (journald reads a service's stderr a little after the command that caused it returns). The
# whole journal, counted before and after: a cursor with -u or -t missed some of kvfdpd's lines.
jcount() { journalctl --no-pager -o cat | grep -c -e "$1"; }
journal_wait() { wait_until 30 sh -c "[ \"\$(journalctl --no-pager -o cat | grep -c -e '$1')\" -ge $2 ]"; }
prop() { systemctl show -p "$1" --value kvfdpd; }
# short_on_5 FILE: `kvfdp -o json policy show` maps class short to handle 5
short_on_5() { tr -d ' \n' < "$1" | grep -q '"class":"short"[^}]*"handle":5[,}]'; }
status_json() { kvfdp -o json status > /tmp/status.json && cat /tmp/status.json; }
# io_errors: kernel lines that say an I/O error reached a disk or the filesystem
io_errors() { dmesg | grep -iE 'I/O error|blk_update_request|xfs.*(corrupt|shutdown|error)' ; }

step "systemd is PID 1"
expect_eq "PID 1" "$(cat /proc/1/comm)" systemd
state=$(systemctl is-system-running --wait)
[ "$state" = running ] || systemctl --failed --no-pager
expect_eq "the system came up" "$state" running

step "install the package: apt-get install ./$(basename "$DEB")"
check "ublk_drv is not loaded yet (the package loads it)" test ! -e /dev/ublk-control
check "apt-get update (the guest's repository of kvfdp's Depends)" apt-get -q update
(cd "$(dirname "$DEB")" && apt-get install -y -q "./$(basename "$DEB")") > "$OUT/apt-install.log" 2>&1; rc=$?
cat "$OUT/apt-install.log"
expect_eq "apt-get install ./kvfdp_*.deb" "$rc" 0
for p in kvfdp liburing2 $(dpkg-deb -f "$DEB" Depends | grep -o 'libbpf1'); do
	expect_eq "$p installed" "$(dpkg-query -W -f '${Status}' "$p" 2>&1)" "install ok installed"
done
check "postinst made the kvfdp group (systemd-sysusers)" getent group kvfdp
check "the unit is at /usr/lib/systemd/system" test -f /usr/lib/systemd/system/kvfdpd.service
expect_eq "the install does not enable kvfdpd" "$(systemctl is-enabled kvfdpd 2>&1)" disabled
expect_eq "nor start it" "$(systemctl is-active kvfdpd 2>&1)" inactive
dpkg-query -L kvfdp > /tmp/kvfdp.files
expect_ge "files the package installs" "$(wc -l < /tmp/kvfdp.files)" 10
cp /etc/kvfdp/kvfdp.toml /tmp/shipped.toml

step "KVFDPD_DEVICE missing, then wrong: the start fails with one line that says what to set"
expect_eq "/etc/default/kvfdpd ships KVFDPD_DEVICE unset" "$(sed -n 's/^KVFDPD_DEVICE=//p' /etc/default/kvfdpd)" ""
# bad_start LABEL PATTERN [EXIT]: systemctl start fails, once, with one kvfdpd error line matching
# PATTERN (and kvfdpd itself exited EXIT, when given)
bad_start() {
	_e0=$(jcount 'kvfdpd: error'); _p0=$(jcount "$2")
	systemctl start kvfdpd; rc=$?
	check "$1: systemctl start fails" test "$rc" -ne 0
	check "$1: the journal says what to set" journal_wait "$2" $((_p0 + 1))
	journalctl --no-pager -o cat -u kvfdpd -n 4
	expect_eq "$1: one error line in the journal" "$(($(jcount 'kvfdpd: error') - _e0))" 1
	expect_eq "$1: the unit is failed" "$(systemctl is-failed kvfdpd)" failed
	[ -z "${3:-}" ] || expect_eq "$1: kvfdpd exited $3" "$(prop ExecMainStatus)" "$3"
	expect_eq "$1: and not restarted" "$(prop NRestarts)" 0
	check "$1: no ublk disk" test ! -e /dev/ublkb0
	systemctl reset-failed kvfdpd
}
bad_start "unset" 'kvfdpd: error: KVFDPD_DEVICE is not set: set KVFDPD_DEVICE=/dev/ngXnY (the FDP namespace; ls /dev/ng\*) in /etc/default/kvfdpd'
mv /etc/default/kvfdpd /tmp/default.kvfdpd
bad_start "no /etc/default/kvfdpd" 'KVFDPD_DEVICE is not set: set KVFDPD_DEVICE=/dev/ngXnY .* in /etc/default/kvfdpd'
mv /tmp/default.kvfdpd /etc/default/kvfdpd
sed -i 's|^KVFDPD_DEVICE=.*|KVFDPD_DEVICE=/dev/nvme0n1|' /etc/default/kvfdpd
bad_start "the block device" 'KVFDPD_DEVICE=/dev/nvme0n1 is not an NVMe generic character device: set KVFDPD_DEVICE=/dev/ngXnY'

step "fix it (one line); kvfdpd's own refusals (bad KVFDPD_OPTS: exit 2, the config a directory: exit 1) are not restarted either"
sed -i 's|^KVFDPD_DEVICE=.*|KVFDPD_DEVICE=/dev/ng0n1|' /etc/default/kvfdpd
cp /etc/default/kvfdpd /tmp/default.good
echo 'KVFDPD_OPTS="--depth many"' >> /etc/default/kvfdpd
bad_start "KVFDPD_OPTS=\"--depth many\"" 'kvfdpd: error: Could not convert: --depth = many' 2
cp /tmp/default.good /etc/default/kvfdpd
mv /etc/kvfdp/kvfdp.toml /tmp/kvfdp.toml.good
mkdir /etc/kvfdp/kvfdp.toml
bad_start "kvfdp.toml a directory" 'kvfdpd: error: /etc/kvfdp/kvfdp.toml is a directory, not a regular file' 1
rmdir /etc/kvfdp/kvfdp.toml
mv /tmp/kvfdp.toml.good /etc/kvfdp/kvfdp.toml
check "kvfdp.toml is the shipped one again" cmp -s /tmp/shipped.toml /etc/kvfdp/kvfdp.toml

step "systemctl enable --now kvfdpd: READY"
check "systemctl enable --now kvfdpd" systemctl enable --now kvfdpd
expect_eq "active once READY=1 (Type=notify)" "$(prop ActiveState)/$(prop SubState)" active/running
check "/dev/ublkb0 serves" test -b /dev/ublkb0
check "the unit loaded ublk_drv" test -e /dev/ublk-control
expect_eq "enabled" "$(systemctl is-enabled kvfdpd)" enabled
check "kvfdp status reaches kvfdpd" status_json
check "kvfdp status: /dev/ublkb0 on /dev/ng0n1" grep -q '/dev/ublkb0' /tmp/status.json
check "the control socket is root:kvfdp" sh -c 'stat -c %G /run/kvfdp/kvfdpd.sock | grep -qx kvfdp'
check "its STATUS says it serves" sh -c "systemctl status kvfdpd --no-pager | grep -q 'serving /dev/ublkb0'"

step "mkfs.xfs and a mount unit ordered after kvfdpd"
check "mkfs.xfs /dev/ublkb0" mkfs.xfs -q -f /dev/ublkb0
cat > /etc/systemd/system/mnt-kv.mount <<'EOF'
[Unit]
Wants=kvfdpd.service
After=kvfdpd.service

[Mount]
What=/dev/ublkb0
Where=/mnt/kv
Type=xfs
Options=discard

[Install]
WantedBy=multi-user.target
EOF
systemctl daemon-reload
check "systemctl enable --now mnt-kv.mount" systemctl enable --now mnt-kv.mount
check "/mnt/kv is XFS on /dev/ublkb0" sh -c "grep -q '^/dev/ublkb0 /mnt/kv xfs ' /proc/mounts"
mkdir -p /mnt/kv/short /mnt/kv/long

step "reload with a good policy (a directory rule, short on handle 5), edited in place"
gen() { kvfdp -o json status | json_num policy_generation; }
g0=$(gen)
expect_ge "policy generation" "$g0" 1
cat >> /etc/kvfdp/kvfdp.toml <<'EOF'

[[rule]]
path = "/mnt/kv/short"
class = "short"
EOF
sed -i 's/^#short = 1$/short = 5/' /etc/kvfdp/kvfdp.toml
check "the edit set short = 5" grep -q '^short = 5$' /etc/kvfdp/kvfdp.toml
check "kvfdp policy check accepts it" kvfdp policy check /etc/kvfdp/kvfdp.toml
check "systemctl reload kvfdpd" systemctl reload kvfdpd
check "the generation goes up" wait_until 20 sh -c "[ \"\$(kvfdp -o json status | sed -n 's/.*\"policy_generation\": *\([0-9]*\).*/\1/p')\" = $((g0 + 1)) ]"
kvfdp -o json policy show > /tmp/policy.json; cp /tmp/policy.json "$OUT/policy.json"
check "short is on handle 5" short_on_5 /tmp/policy.json
check "the rule is in force" grep -q '/mnt/kv/short' /tmp/policy.json
g1=$(gen)

step "an edited kvfdp.toml survives a reinstall (conffile)"
md5sum /etc/kvfdp/kvfdp.toml > /tmp/toml.md5
check "apt-get install --reinstall" sh -c "cd /opt/kvfdp/debs && apt-get install -y -q --reinstall ./$(basename "$DEB") > /tmp/reinstall.log 2>&1"
check "kvfdp.toml is still the edited one" md5sum -c /tmp/toml.md5
check "the shipped one differs from it" sh -c '! cmp -s /tmp/shipped.toml /etc/kvfdp/kvfdp.toml'
expect_eq "kvfdpd kept running through the reinstall" "$(prop ActiveState)" active

step "tagged writes: the directory rule (short) and F_SET_RW_HINT (long)"
for i in 1 2 3; do
	check "rule file s$i" $T write /mnt/kv/short/s$i 0 1024 --seed $i
	check "hinted long file l$i" $T write /mnt/kv/long/l$i 4 1024 --seed $((i + 10))
done
sync
kvfdp metrics > /tmp/m1.prom
check "short bytes counted" grep -qE '^kvfdp_class_bytes_total\{class="short"\} [1-9]' /tmp/m1.prom
check "long bytes counted" grep -qE '^kvfdp_class_bytes_total\{class="long"\} [1-9]' /tmp/m1.prom
check "handle 5 took writes (short)" grep -qE '^kvfdp_handle_bytes_total\{handle="5"[,}].* [1-9]' /tmp/m1.prom

step "reload with a bad policy: refused, the old one stays"
cp /etc/kvfdp/kvfdp.toml /tmp/good.toml
sed -i 's/^short = 5$/short = 42/' /etc/kvfdp/kvfdp.toml
_k0=$(jcount 'old policy kept')
check "systemctl reload kvfdpd (the bad file)" systemctl reload kvfdpd
check "the refusal reaches the journal" journal_wait 'handle 42 out of range.*old policy kept' 1
journalctl --no-pager -o cat -u kvfdpd -n 3
expect_eq "one refusal line" "$(($(jcount 'old policy kept') - _k0))" 1
expect_eq "kvfdp status: generation unchanged" "$(gen)" "$g1"
kvfdp -o json policy show > /tmp/policy2.json
check "kvfdp policy: short still on handle 5" short_on_5 /tmp/policy2.json
expect_eq "still active" "$(prop ActiveState)" active
cp /tmp/good.toml /etc/kvfdp/kvfdp.toml

step "kill -9 the main PID $KILLS times while a writer writes: systemd restarts it with --attach"
: > /tmp/wcount
(
	i=0
	while [ ! -e /tmp/wstop ]; do
		i=$((i + 1))
		$T write /mnt/kv/short/w$i 0 1024 --seed $((1000 + i)) > /dev/null 2>> /tmp/werr || echo "w$i failed" >> /tmp/werr
		echo $i > /tmp/wcount
	done
) &
WPID=$!
written() { cat /tmp/wcount 2>/dev/null || echo 0; }
k=1
while [ $k -le $KILLS ]; do
	n=$(written); n=${n:-0}
	wait_until 60 sh -c "[ \"\$(cat /tmp/wcount)\" -ge $((n + 2)) ] 2>/dev/null" || echo "FAIL: kill $k: the writer made no progress"
	pid=$(prop MainPID)
	t0=$(date +%s.%N)
	kill -9 "$pid"
	if ! wait_until 60 sh -c "p=\$(systemctl show -p MainPID --value kvfdpd); [ \"\$p\" != 0 ] && [ \"\$p\" != $pid ] && [ \"\$(systemctl show -p ActiveState --value kvfdpd)/\$(systemctl show -p SubState --value kvfdpd)\" = active/running ]"; then
		systemctl status kvfdpd --no-pager
		die "kill $k: kvfdpd was not restarted and READY within 60 s"
	fi
	echo "kill $k: pid $pid -> $(prop MainPID), active again after $(echo "$t0 $(date +%s.%N)" | awk '{ printf "%.2f", $2 - $1 }') s" |
		tee -a "$OUT/kills.txt"
	k=$((k + 1))
done
expect_eq "systemd restarted it $KILLS times" "$(prop NRestarts)" "$KILLS"
check "the running one re-attached (kvfdp status)" sh -c "kvfdp -o json status | tr -d ' \n' | grep -q '\"recovered\":true'"
check "its command line has --attach" sh -c "tr '\0' ' ' < /proc/$(prop MainPID)/cmdline | grep -q -- '--dev-id 0 --attach'"
touch /tmp/wstop
wait $WPID
check "the writer saw no error" test ! -s /tmp/werr
NW=$(written)
expect_ge "files written across the kills" "$NW" $((2 * KILLS))

step "contents after the kills, read back from the disk"
# verify_all LABEL [N]: the tagged files and the writer's first N files (default all) hold what was written
verify_all() {
	_bad=0
	for i in 1 2 3; do
		$T verify /mnt/kv/short/s$i $i || _bad=$((_bad + 1))
		$T verify /mnt/kv/long/l$i $((i + 10)) || _bad=$((_bad + 1))
	done
	i=1
	while [ $i -le "${2:-$NW}" ]; do $T verify /mnt/kv/short/w$i $((1000 + i)) || _bad=$((_bad + 1)); i=$((i + 1)); done
	expect_eq "$1: files whose contents differ" "$_bad" 0
}
check "systemctl restart mnt-kv.mount (unmount, mount)" systemctl restart mnt-kv.mount
verify_all "read back from the disk"
expect_eq "no I/O error in the kernel log" "$(io_errors | wc -l)" 0
io_errors

step "systemctl stop with the disk mounted: kvfdpd leaves /dev/ublkb0 held and says so; start re-attaches"
check "systemctl stop kvfdpd" systemctl stop kvfdpd
expect_eq "kvfdpd stopped cleanly (exit 0, not failed)" "$(prop ActiveState)/$(prop Result)" inactive/success
check "/dev/ublkb0 is left" test -b /dev/ublkb0
check "still mounted (Wants=, not Requires=: nothing unmounts it)" sh -c "grep -q '^/dev/ublkb0 /mnt/kv ' /proc/mounts"
check "one line says it is left for the next kvfdpd" journal_wait 'ublkb0 is in use (mounted?): leaving it, I/O held' 1
check "systemctl start kvfdpd re-attaches" systemctl start kvfdpd
check "kvfdp status: recovered" sh -c "kvfdp -o json status | tr -d ' \n' | grep -q '\"recovered\":true'"
verify_all "after stop and start while mounted" 8

step "systemctl stop after unmounting: the disk is removed; fsck clean"
check "systemctl stop mnt-kv.mount" systemctl stop mnt-kv.mount
check "xfs_repair -n: clean" xfs_repair -n /dev/ublkb0
_r0=$(jcount 'ublkb0 draining and removing')
check "systemctl stop kvfdpd" systemctl stop kvfdpd
check "/dev/ublkb0 is gone" test ! -e /dev/ublkb0
check "the pinned tagger went with it" test ! -e /sys/fs/bpf/kvfdp/ublkb0
check "kvfdpd said it removed the disk" journal_wait 'ublkb0 draining and removing' $((_r0 + 1))
expect_eq "no I/O error in the kernel log" "$(io_errors | wc -l)" 0

step "apt-get purge kvfdp: no file, group, unit or enable link left"
systemctl disable --now mnt-kv.mount
rm -f /etc/systemd/system/mnt-kv.mount
systemctl daemon-reload
check "apt-get purge -y kvfdp" sh -c 'apt-get purge -y -q kvfdp > /tmp/purge.log 2>&1'
cat /tmp/purge.log
cp /tmp/purge.log "$OUT/apt-purge.log"
expect_eq "dpkg no longer knows kvfdp" "$(dpkg-query -W -f '${Status}' kvfdp 2>/dev/null || echo gone)" gone
left=0
while read -r f; do
	if [ ! -d "$f" ] && { [ -e "$f" ] || [ -L "$f" ]; }; then echo "left: $f"; left=$((left + 1)); fi
done < /tmp/kvfdp.files
expect_eq "files of the package left" "$left" 0
check "/etc/kvfdp is gone" test ! -e /etc/kvfdp
check "/etc/default/kvfdpd is gone" test ! -e /etc/default/kvfdpd
check "no kvfdp group" sh -c '! getent group kvfdp'
check "no enable link" sh -c '! ls /etc/systemd/system/*.wants/kvfdpd.service 2>/dev/null | grep -q .'
check "/usr/share/doc/kvfdp and /usr/share/kvfdp are gone" sh -c '! ls -d /usr/share/doc/kvfdp /usr/share/kvfdp 2>/dev/null'
check "no deb-systemd-helper state" sh -c '! find /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked -name "kvfdpd*" 2>/dev/null | grep -q .'
expect_eq "systemd no longer has the unit" "$(systemctl show -p LoadState --value kvfdpd)" not-found
check "no kvfdpd process" sh -c '! pidof kvfdpd'
check "/run/kvfdp is gone" test ! -e /run/kvfdp
finish
