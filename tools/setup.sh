#!/usr/bin/env bash
# Install what kvfdp needs to build and test on Debian 12 (bookworm). Idempotent.
# Never upgrades a host package: only missing packages are installed (--no-upgrade),
# and apt waits for the dpkg lock instead of failing. QEMU 10 and bpftool 7.5 come from
# bookworm-backports, which is added to apt's sources when absent.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-y -q --no-upgrade --no-install-recommends -o DPkg::Lock::Timeout=300)

# Host packages from bookworm: toolchain, libraries, and what the host tests use.
BOOKWORM_PKGS=(
	build-essential cmake ninja-build pkg-config git
	clang llvm
	liburing-dev libbpf-dev libelf-dev zlib1g-dev libnvme-dev
	doctest-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libsystemd-dev
	kmod cpio xz-utils zstd e2fsprogs xfsprogs util-linux python3 valgrind
)
# From bookworm-backports: QEMU with FDP emulation and a bpftool that emits 1-byte enums.
BACKPORTS_PKGS=(qemu-system-x86 bpftool)

log() { printf 'setup: %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
	log "must run as root (it installs Debian packages); try: sudo $0"
	exit 1
fi
if ! grep -qs 'bookworm' /etc/os-release; then
	log "warning: this is not Debian 12 (bookworm); package names may differ"
fi

missing() { # prints the packages among "$@" that are not installed
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
	done
}

backports_present() {
	grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/
}

need_update=0
if ! backports_present; then
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
# qemu-system-x86 from bookworm itself (7.2) has no FDP; insist on the backports one.
if dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null | grep -q '^1:7\.'; then
	log "qemu-system-x86 7.x is installed; FDP needs 8.0+: install qemu-system-x86/bookworm-backports by hand (setup never upgrades)"
fi

if [ ${#want_main[@]} -eq 0 ] && [ ${#want_bp[@]} -eq 0 ] && [ $need_update -eq 0 ]; then
	log "all packages present"
	exit 0
fi

# Fresh machines have no package lists; refresh them once (this upgrades nothing).
if [ $need_update -eq 1 ] || [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ] ||
	! apt-cache policy qemu-system-x86 2>/dev/null | grep -q bookworm-backports; then
	log "apt-get update"
	apt-get -q -o DPkg::Lock::Timeout=300 update >/dev/null
fi

if [ ${#want_main[@]} -gt 0 ]; then
	log "installing: ${want_main[*]}"
	apt-get install "${APT_OPTS[@]}" "${want_main[@]}"
fi
if [ ${#want_bp[@]} -gt 0 ]; then
	log "installing from bookworm-backports: ${want_bp[*]}"
	apt-get install "${APT_OPTS[@]}" -t bookworm-backports "${want_bp[@]}"
fi
log "done"
