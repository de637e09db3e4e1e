#!/bin/sh
# check_deb.sh BUILD OUT VERSION WITH_BPF: builds kvfdp_VERSION_amd64.deb and
# libkvgpu-dev_VERSION_amd64.deb from BUILD with cpack into OUT, then checks with dpkg-deb
# that each holds what deploying needs. Runs as any user (cpack's DEB writer needs no root).
build=$1; out=$2; version=$3; with_bpf=$4
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$out" && mkdir -p "$out" || exit 1
cpack --config "$build/CPackConfig.cmake" -B "$out" > "$out/cpack.log" 2>&1 || {
	cat "$out/cpack.log"; echo "FAIL: cpack exited non-zero"; exit 1; }
deb=$out/kvfdp_${version}_amd64.deb
dev=$out/libkvgpu-dev_${version}_amd64.deb
for f in "$deb" "$dev"; do
	[ -f "$f" ] || { ls "$out"; echo "FAIL: $f was not built"; exit 1; }
done

# Files: a path listed by dpkg-deb -c, as ./path.
has_file() { dpkg-deb -c "$1" | awk '{print $6}' | grep -qx "./$2" || fail "$(basename "$1") lacks /$2"; }
for p in usr/bin/kvfdpd usr/bin/kvfdp usr/lib/systemd/system/kvfdpd.service \
	usr/lib/sysusers.d/kvfdp.conf usr/lib/modules-load.d/kvfdp.conf etc/kvfdp/kvfdp.toml \
	etc/default/kvfdpd usr/share/doc/kvfdp/copyright usr/share/doc/kvfdp/changelog.gz \
	usr/share/doc/kvfdp/deploy.md usr/share/kvfdp/grafana/kvfdp.json \
	usr/share/kvfdp/prometheus/kvfdp-alerts.yml; do
	has_file "$deb" "$p"
done
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for p in usr/include/kvgpu/kvgpu.h usr/include/kvgpu/kvgpu.hpp "usr/lib/$arch/libkvgpu.so" \
	"usr/lib/$arch/libkvgpu.a" "usr/lib/$arch/pkgconfig/kvgpu.pc" \
	usr/lib/python3/dist-packages/kvgpu.py usr/share/doc/libkvgpu-dev/copyright; do
	has_file "$dev" "$p"
done
# Nothing under /usr/local in a package.
dpkg-deb -c "$deb" "$dev" 2>/dev/null | grep -q 'usr/local' && fail "a package installs under /usr/local"

# Control fields: name, version (the CMake project version), Depends from dpkg-shlibdeps.
field() { dpkg-deb -f "$1" "$2"; }
[ "$(field "$deb" Package)" = kvfdp ] || fail "Package is '$(field "$deb" Package)'"
[ "$(field "$deb" Version)" = "$version" ] || fail "Version is '$(field "$deb" Version)', not $version"
[ "$(field "$dev" Package)" = libkvgpu-dev ] || fail "dev Package is '$(field "$dev" Package)'"
depends=$(field "$deb" Depends)
want="libc6 libstdc++6 liburing2"
[ "$with_bpf" = 1 ] && want="$want libbpf1"
for lib in $want; do
	echo "$depends" | grep -q "\\b$lib (>=" || fail "Depends lacks $lib (>= ...): $depends"
done
echo "$(field "$dev" Depends)" | grep -q 'liburing2 (>=' || fail "libkvgpu-dev Depends lacks liburing2"

# Control files: conffiles, and maintainer scripts that make the group and reload systemd.
ctl=$out/control
dpkg-deb -e "$deb" "$ctl" || exit 1
[ "$(sort "$ctl/conffiles")" = "$(printf '/etc/default/kvfdpd\n/etc/kvfdp/kvfdp.toml')" ] ||
	fail "conffiles: $(cat "$ctl/conffiles")"
grep -q 'systemd-sysusers kvfdp.conf' "$ctl/postinst" || fail "postinst does not run systemd-sysusers"
grep -q 'daemon-reload' "$ctl/postinst" || fail "postinst does not reload systemd"
grep -q 'daemon-reload' "$ctl/postrm" || fail "postrm does not reload systemd"
grep -q 'purge' "$ctl/postrm" || fail "postrm does nothing on purge"
grep -q 'groupdel "$g"' "$ctl/postrm" && grep -q 'kvfdp-admin kvfdp' "$ctl/postrm" ||
	fail "postrm does not remove the kvfdp and kvfdp-admin groups on purge"
grep -q 'stop kvfdpd.service' "$ctl/prerm" || fail "prerm does not stop kvfdpd"
for s in postinst prerm postrm; do
	sh -n "$ctl/$s" || fail "$s: shell syntax error"
	[ -x "$ctl/$s" ] || fail "$s is not executable"
done

# Contents: the unit runs the packaged binary; the binaries report the package's version.
root=$out/root
dpkg-deb -x "$deb" "$root" || exit 1
grep -q '^ExecStart=/usr/bin/kvfdpd ' "$root/usr/lib/systemd/system/kvfdpd.service" ||
	fail "the unit's ExecStart is not /usr/bin/kvfdpd: $(grep ExecStart= "$root/usr/lib/systemd/system/kvfdpd.service")"
grep -q 'file:///usr/share/doc/kvfdp/deploy.md' "$root/usr/lib/systemd/system/kvfdpd.service" ||
	fail "the unit's Documentation= does not name the packaged deploy.md"
got=$("$root/usr/bin/kvfdp" version) || fail "packaged kvfdp version exited non-zero"
[ "$got" = "kvfdp $version" ] || fail "packaged kvfdp version says '$got', package is $version"
got=$("$root/usr/bin/kvfdp" --version) || fail "packaged kvfdp --version exited non-zero"
[ "$got" = "kvfdp $version" ] || fail "packaged kvfdp --version says '$got', package is $version"
got=$("$root/usr/bin/kvfdpd" --version) || fail "packaged kvfdpd --version exited non-zero"
[ "$got" = "kvfdpd $version" ] || fail "packaged kvfdpd --version says '$got', package is $version"
"$root/usr/bin/kvfdpd" --help > /dev/null || fail "packaged kvfdpd --help exited non-zero"
grep -qx 'KVFDPD_DEVICE=' "$root/etc/default/kvfdpd" || fail "/etc/default/kvfdpd does not ship KVFDPD_DEVICE unset"
grep -q 'in /etc/default/kvfdpd' "$root/usr/lib/systemd/system/kvfdpd.service" ||
	fail "the unit does not check KVFDPD_DEVICE (one line naming /etc/default/kvfdpd)"
gzip -dc "$root/usr/share/doc/kvfdp/changelog.gz" | head -1 | grep -q "^kvfdp ($version)" ||
	fail "changelog.gz does not start with kvfdp ($version)"

# Hardening (cmake/KvfdpHardening.cmake), what lintian's hardening-no-{pie,relro,bindnow,
# fortify-functions} tags check, read with readelf: PIE, full RELRO, fortified libc calls, and
# the stack protector.
for b in usr/bin/kvfdpd usr/bin/kvfdp; do
	f=$root/$b
	readelf -h "$f" | grep -q 'Type:[[:space:]]*DYN' || fail "/$b is not PIE (hardening-no-pie)"
	readelf -lW "$f" | grep -q GNU_RELRO || fail "/$b has no RELRO segment (hardening-no-relro)"
	readelf -dW "$f" | grep -Eq 'BIND_NOW|FLAGS_1.*NOW' || fail "/$b is not linked -z now (hardening-no-bindnow)"
	readelf --dyn-syms -W "$f" | grep -o '__[a-z_]*_chk' | grep -vqx '__stack_chk' ||
		fail "/$b calls no fortified libc function (hardening-no-fortify-functions)"
	readelf --dyn-syms -W "$f" | grep -q '__stack_chk_fail' || fail "/$b has no stack protector"
done
dev_root=$out/dev-root
dpkg-deb -x "$dev" "$dev_root" || exit 1
so=$dev_root/usr/lib/$arch/libkvgpu.so
readelf -lW "$so" | grep -q GNU_RELRO || fail "libkvgpu.so has no RELRO segment (hardening-no-relro)"
readelf -dW "$so" | grep -Eq 'BIND_NOW|FLAGS_1.*NOW' || fail "libkvgpu.so is not linked -z now (hardening-no-bindnow)"
readelf --dyn-syms -W "$so" | grep -o '__[a-z_]*_chk' | grep -vqx '__stack_chk' ||
	fail "libkvgpu.so calls no fortified libc function (hardening-no-fortify-functions)"

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "ok: $(basename "$deb") and $(basename "$dev"): files, conffiles, scripts, Depends: $depends"
