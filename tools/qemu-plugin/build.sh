#!/usr/bin/env bash
# Builds the insn_count QEMU TCG plugin (tools/qemu-plugin/insn_count.c) against the qemu-plugin.h of
# the Debian source package of the QEMU that is installed (qemu-system-x86; the VM harness runs it).
#
# Usage: tools/qemu-plugin/build.sh [--out DIR]     (default DIR: <repo>/build/qemu-plugin)
# Prints the plugin's path. Exit 0 built, 77 skipped (one line "SKIP: qemu-plugin: REASON" naming what
# is missing: QEMU, the source package, glib's headers, a C compiler), 1 failed.
#
# The header: `apt-get source --download-only SRC=VERSION` of the installed package's source, through a
# private source list (one deb-src line for bookworm-backports, from the archive the host takes
# bookworm-backports from) with its own package lists and cache in $KVFDP_VM_CACHE/qemu-plugin (default
# <repo>/build/vm-cache/qemu-plugin); the host's apt sources are never changed. apt checks each file
# against the archive's Sources index; only include/qemu/qemu-plugin.h is kept, from the upstream
# (orig) tarball, as qemu-plugin-VERSION.h. The header includes <glib.h>: glib's headers come from
# pkg-config glib-2.0 when libglib2.0-dev is installed, else from `apt-get download libglib2.0-dev`
# unpacked (dpkg-deb -x) into the same cache: nothing is installed. The plugin calls no glib function.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$REPO/build/qemu-plugin
while [ $# -gt 0 ]; do
	case $1 in
	--out) [ $# -ge 2 ] || { echo "build.sh: --out needs a directory" >&2; exit 1; }; OUT=$2; shift 2 ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "build.sh: unknown option '$1' (see --help)" >&2; exit 1 ;;
	esac
done
skip() { echo "SKIP: qemu-plugin: $*"; exit 77; }
fail() { echo "build.sh: $*" >&2; exit 1; }

CC=${CC:-cc}
command -v "$CC" >/dev/null || skip "no C compiler ($CC): run tools/setup.sh"
for t in apt-get dpkg-query dpkg-deb tar flock; do command -v $t >/dev/null || skip "host tool '$t' is missing"; done
read -r SRC SRCVER < <(dpkg-query -W -f '${source:Package} ${source:Version}\n' qemu-system-x86 2>/dev/null) ||
	skip "qemu-system-x86 is not installed (tools/setup.sh installs QEMU 10 from bookworm-backports)"
[ -n "${SRCVER:-}" ] || skip "qemu-system-x86 is not installed (tools/setup.sh)"
UPVER=${SRCVER#*:}
UPVER=${UPVER%-*}

CACHE=${KVFDP_VM_CACHE:-$REPO/build/vm-cache}/qemu-plugin
mkdir -p "$CACHE" "$OUT" || fail "cannot create $CACHE or $OUT"
exec 8>"$CACHE/lock"
flock 8

HDR=$CACHE/qemu-plugin-$SRCVER.h
APTD=$CACHE/apt
uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null | awk '$2 == "bookworm-backports" { print $1; exit }')
[ -n "$uri" ] || uri=http://deb.debian.org/debian/
APT=(apt-get -q -o APT::Sandbox::User=root -o Debug::NoLocking=1 -o "Dir::Etc::SourceList=$APTD/sources.list"
	-o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$APTD/lists" -o "Dir::Cache=$APTD/cache")
if [ ! -s "$HDR" ]; then
	mkdir -p "$APTD/lists/partial" "$APTD/cache/archives/partial" || fail "cannot create $APTD"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri bookworm-backports main" > "$APTD/sources.list"
	"${APT[@]}" update >"$CACHE/update.log" 2>&1 ||
		skip "the Debian archive's bookworm-backports Sources cannot be fetched ($uri; $CACHE/update.log)"
	dl=$CACHE/src
	rm -rf "$dl" && mkdir -p "$dl"
	# The orig tarball holds the header; apt verifies every file it fetches against the Sources index.
	# (On this project's mirror the .dsc and .debian.tar of some versions answer 404 while the orig
	# tarball is there, so a partial download that has the checked orig tarball is enough.)
	(cd "$dl" && "${APT[@]}" source --download-only "$SRC=$SRCVER") >"$CACHE/source.log" 2>&1
	orig=$(ls "$dl"/"${SRC}_${UPVER}".orig.tar.* 2>/dev/null | head -n 1)
	[ -n "$orig" ] || skip "the source package $SRC=$SRCVER is not in the archive's bookworm-backports Sources ($CACHE/source.log)"
	want=$("${APT[@]}" source --print-uris "$SRC=$SRCVER" 2>/dev/null | awk -v f="$(basename "$orig")" '$2 == f { sub(/^SHA256:/, "", $4); print $4 }')
	[ -n "$want" ] && [ "$(sha256sum "$orig" | cut -d' ' -f1)" = "$want" ] ||
		fail "$orig does not match the SHA256 in the archive's Sources index"
	tar xf "$orig" -C "$dl" --wildcards '*/include/qemu/qemu-plugin.h' 2>"$CACHE/tar.log" ||
		fail "$orig has no include/qemu/qemu-plugin.h ($CACHE/tar.log)"
	mv "$(find "$dl" -name qemu-plugin.h | head -n 1)" "$HDR.tmp" && mv "$HDR.tmp" "$HDR" || fail "cannot keep the header in $CACHE"
	rm -rf "$dl"
fi

# glib's headers
if pkg-config --exists glib-2.0 2>/dev/null; then
	GLIB_CFLAGS=$(pkg-config --cflags glib-2.0)
else
	G=$CACHE/glib
	if [ ! -f "$G/usr/include/glib-2.0/glib.h" ]; then
		rm -rf "$G" "$CACHE/glibdeb" && mkdir -p "$CACHE/glibdeb"
		gver=$(dpkg-query -W -f '${Version}' libglib2.0-0 2>/dev/null)
		# the installed glib's version when the archive still has it, else the archive's
		(cd "$CACHE/glibdeb" && { apt-get -q download "libglib2.0-dev=$gver" || apt-get -q download libglib2.0-dev; }) \
			>"$CACHE/glib.log" 2>&1 || skip "no glib headers: libglib2.0-dev is neither installed nor downloadable ($CACHE/glib.log)"
		dpkg-deb -x "$CACHE"/glibdeb/libglib2.0-dev_*.deb "$G" || fail "cannot unpack libglib2.0-dev into $G"
		rm -rf "$CACHE/glibdeb"
	fi
	GLIB_CFLAGS="-I$G/usr/include/glib-2.0 -I$(dirname "$(find "$G" -name glibconfig.h | head -n 1)")"
fi

mkdir -p "$CACHE/include" && cp "$HDR" "$CACHE/include/qemu-plugin.h" || fail "cannot stage the header"
# shellcheck disable=SC2086
"$CC" -O2 -g -Wall -Wextra -Werror -std=gnu11 -fPIC -shared -I"$CACHE/include" $GLIB_CFLAGS \
	-o "$OUT/insn_count.so.tmp" "$HERE/insn_count.c" || fail "compiling $HERE/insn_count.c failed"
mv "$OUT/insn_count.so.tmp" "$OUT/insn_count.so"
echo "$SRC $SRCVER" > "$OUT/insn_count.qemu-version"
echo "$OUT/insn_count.so"
