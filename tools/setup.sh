#!/usr/bin/env bash
# Install what kvfdp needs to build and test on Debian 12 (bookworm). Idempotent.
# Never upgrades a host package: only missing packages are installed (--no-upgrade), and an
# install that would upgrade an installed package (a -dev package pinning a newer runtime
# library, say) is refused before anything changes, naming the packages. apt waits for the
# dpkg lock instead of failing. QEMU 10 and bpftool 7.5 come from bookworm-backports, which is
# added to apt's sources when absent. What it changes on a host: that sources file
# (/etc/apt/sources.list.d/kvfdp-backports.sources), apt's package lists, and the packages below.
# The VM tests' prerequisites are hard requirements: it fails (exit 1) when QEMU with FDP
# emulation cannot be installed, rather than leaving the vm tests to skip.
# --check: change nothing, as any user: exit 0 when every package is installed and QEMU has FDP
# emulation, else 1 naming what is missing (./tools/dev.sh runs it before asking sudo for more).
set -euo pipefail
CHECK=0
case ${1:-} in
--check) CHECK=1 ;;
'') ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-y -q --no-upgrade --no-install-recommends -o DPkg::Lock::Timeout=300)

# Host packages from bookworm: toolchain, libraries, and what the host tests use (prometheus
# for promtool, which test_prometheus_alerts runs; librsvg2-bin for rsvg-convert, which
# test_plot_render runs; under systemd the package also starts a
# Prometheus server on :9090: `systemctl disable --now prometheus` if the host does not want it).
BOOKWORM_PKGS=(
	build-essential cmake ninja-build pkg-config git
	clang llvm
	liburing-dev libbpf-dev libelf-dev zlib1g-dev libnvme-dev
	doctest-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
	kmod cpio xz-utils zstd e2fsprogs xfsprogs util-linux python3 valgrind
	prometheus
	librsvg2-bin
	clang-format
)
# From bookworm-backports: QEMU with FDP emulation and a bpftool that emits 1-byte enums.
BACKPORTS_PKGS=(qemu-system-x86 bpftool)

log() { printf 'setup: %s\n' "$*" >&2; }

if [ $CHECK -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
	log "must run as root (it installs Debian packages); try: sudo $0"
	exit 1
fi
if ! grep -qs 'bookworm' /etc/os-release; then
	log "warning: this is not Debian 12 (bookworm); package names may differ"
fi

missing() { # prints the packages among "$@" that are not installed
	local p
	for p in "$@"; do
		grep -q 'install ok installed' <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" || echo "$p"
	done
}

backports_present() {
	grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/
}

need_update=0
if [ $CHECK -eq 0 ] && ! backports_present; then
	log "adding bookworm-backports to apt sources"
	cat > /etc/apt/sources.list.d/kvfdp-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	need_update=1
fi

mapfile -t want_main < <(missing "${BOOKWORM_PKGS[@]}")
mapfile -t want_bp < <(missing "${BACKPORTS_PKGS[@]}")
# qemu-system-x86 from bookworm itself (7.2) has no FDP; the VM tests need the backports one.
if grep -q '^1:[0-7]\.' <<<"$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null)"; then
	log "error: qemu-system-x86 $(dpkg-query -W -f='${Version}' qemu-system-x86) is installed; the VM tests need"
	log "  FDP emulation (QEMU 8.0+). Setup never upgrades a package: upgrade it yourself with"
	log "  apt-get install -t bookworm-backports qemu-system-x86   and run setup again."
	exit 1
fi

# QEMU's FDP emulation is what the vm tests run on: a hard requirement, checked after installing.
check_qemu() {
	if ! qemu-system-x86_64 --version >/dev/null 2>&1; then
		log "error: qemu-system-x86_64 is not installed (or does not run); the VM tests need"
		log "  qemu-system-x86 8.0+ from bookworm-backports"
		exit 1
	fi
	if ! grep -q fdp <<<"$(qemu-system-x86_64 -device nvme-subsys,help 2>/dev/null)"; then
		log "error: qemu-system-x86_64 ($(qemu-system-x86_64 --version 2>/dev/null | head -n 1)) has no FDP emulation;"
		log "  the VM tests need qemu-system-x86 8.0+ from bookworm-backports"
		exit 1
	fi
}

# refuse_upgrades [APT-OPTION...] PKG...: fails, changing nothing, when installing the
# packages would upgrade an installed one (apt's simulation shows "Inst NAME [OLD] (NEW ...)")
refuse_upgrades() {
	local sim up
	if ! sim=$(apt-get -s "${APT_OPTS[@]}" install "$@" 2>&1); then
		log "error: apt cannot install $*:"
		echo "$sim" | grep -E '^(E|W):' | head -n 5 >&2
		exit 1
	fi
	up=$(echo "$sim" | sed -n 's/^Inst \([^ ]*\) \[\([^]]*\)\] (\([^ ]*\).*/\1 \2 -> \3/p')
	[ -z "$up" ] && return 0
	log "error: installing $* would upgrade installed packages, and setup never upgrades:"
	echo "$up" | sed 's/^/setup:   /' >&2
	log "  upgrade them yourself (apt-get install --only-upgrade $(echo "$up" | cut -d' ' -f1 | tr '\n' ' ')) and run setup again"
	exit 1
}

if [ $CHECK -eq 1 ]; then
	if [ ${#want_main[@]} -gt 0 ] || [ ${#want_bp[@]} -gt 0 ]; then
		log "missing: ${want_main[*]} ${want_bp[*]} (install as root: tools/setup.sh)"
		exit 1
	fi
	check_qemu
	log "all packages present (checked only)"
	exit 0
fi
if [ ${#want_main[@]} -eq 0 ] && [ ${#want_bp[@]} -eq 0 ] && [ $need_update -eq 0 ]; then
	check_qemu
	log "all packages present"
	exit 0
fi

# Fresh machines have no package lists; refresh them once (this upgrades nothing).
if [ $need_update -eq 1 ] || [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ] ||
	! grep -q bookworm-backports <<<"$(apt-cache policy qemu-system-x86 2>/dev/null)"; then
	log "apt-get update"
	if ! apt-get -q -o DPkg::Lock::Timeout=300 update >/dev/null; then
		log "error: apt-get update failed: the Debian archive (deb.debian.org, bookworm-backports) must be"
		log "  reachable to install what is missing: ${want_main[*]} ${want_bp[*]}"
		exit 1
	fi
fi

# A tool whose library is installed comes at that library's version when the archive has it
# (librsvg2-bin beside a librsvg2-2 older than bookworm-security's): else apt would upgrade
# the library to match, which refuse_upgrades refuses.
pin_to_library() { # PKG LIB
	local v i
	grep -q 'install ok installed' <<<"$(dpkg-query -W -f='${Status}' "$2" 2>/dev/null)" || return 0
	v=$(dpkg-query -W -f='${Version}' "$2")
	grep -qF "| $v |" <<<"$(apt-cache madison "$1" 2>/dev/null)" || return 0
	for i in "${!want_main[@]}"; do
		[ "${want_main[$i]}" = "$1" ] && want_main[i]="$1=$v"
	done
	return 0
}
pin_to_library librsvg2-bin librsvg2-2

if [ ${#want_main[@]} -gt 0 ]; then
	refuse_upgrades "${want_main[@]}"
	log "installing: ${want_main[*]}"
	apt-get install "${APT_OPTS[@]}" "${want_main[@]}"
fi
# Each backports package alone, in the narrowest form apt can resolve: PKG/bookworm-backports
# takes only that package from backports (bpftool needs nothing else); -t bookworm-backports
# also takes its dependencies from there (QEMU 10 needs its own data and firmware packages), but
# applied to bpftool it would drag installed packages of the same source (linux-perf,
# linux-libc-dev) to 6.12, which refuse_upgrades would rightly refuse.
for p in "${want_bp[@]}"; do
	if apt-get -s "${APT_OPTS[@]}" install "$p/bookworm-backports" >/dev/null 2>&1; then
		form=("$p/bookworm-backports")
	else
		form=(-t bookworm-backports "$p")
	fi
	refuse_upgrades "${form[@]}"
	log "installing from bookworm-backports: ${form[*]}"
	apt-get install "${APT_OPTS[@]}" "${form[@]}"
done
check_qemu
log "done"
