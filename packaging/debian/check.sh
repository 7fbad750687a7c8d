#!/bin/sh
# What CI checks of the Debian packaging on every submission (the test
# packaging/deb-check): the packages build from HEAD (build.sh), twice, in
# two different directories, to the same bytes (reproducible: no time or
# build path in them); lintian finds nothing, source or binary, beyond the
# overrides in debian/, each of which says why; each package holds what
# packaging/README.md says, with the relations that let usdtkit-dtrace
# stand in for systemtap-sdt-dev and those of the shared libraries (the
# symbols files, -dev on its library of the same version, Multi-Arch:
# same); the binaries and libraries are hardened.
#
#   sh packaging/debian/check.sh
#
# About 2 minutes. Needs dpkg-dev, debhelper and lintian.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
for c in dpkg-buildpackage lintian readelf; do
	command -v "$c" >/dev/null || { echo "check: $c is not installed (scripts/deps.sh installs it)" >&2; exit 1; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-deb-check.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
fail() { echo "check: FAIL: $*" >&2; exit 1; }

mkdir "$scratch/a" "$scratch/b" "$scratch/tmp-one" "$scratch/tmp-other-longer-path"
USDTKIT_DEB_SCRATCH=$scratch/tmp-one sh "$top/packaging/debian/build.sh" "$scratch/a" >"$scratch/a.log" 2>&1 ||
	{ cat "$scratch/a.log" >&2; fail "build.sh"; }
USDTKIT_DEB_SCRATCH=$scratch/tmp-other-longer-path sh "$top/packaging/debian/build.sh" "$scratch/b" \
	>"$scratch/b.log" 2>&1 || { cat "$scratch/b.log" >&2; fail "build.sh (second build)"; }
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
# USDTKIT_DEB_SHARE=DIR (tests/packaging/meson.build): the first build's
# packages kept in DIR/COMMIT/v1 for test-lifecycle.sh's version 1, which
# would otherwise build the same commit a third time (a build is minutes).
if [ -n "${USDTKIT_DEB_SHARE:-}" ]; then
	. "$top/scripts/lib/head.sh"
	commit=$(head_commit check.sh "$top" 2>/dev/null) || commit=""
	if [ -n "$commit" ]; then
		rm -rf "${USDTKIT_DEB_SHARE:?}/$commit"
		mkdir -p "$USDTKIT_DEB_SHARE/$commit/v1"
		cp "$scratch"/a/*.deb "$USDTKIT_DEB_SHARE/$commit/v1/"
	fi
fi

# 1. Reproducible: every .deb (dbgsym too) and the source tarball.
n=0
for f in "$scratch"/a/*.deb "$scratch"/a/*.tar.xz; do
	g=$scratch/b/${f##*/}
	[ -f "$g" ] || fail "the second build has no ${f##*/}"
	cmp -s "$f" "$g" || fail "${f##*/} differs between two builds in two directories"
	n=$((n + 1))
done
# 12 .debs (4 dbgsym) and the tarball.
[ "$n" -eq 13 ] || fail "$n files built, not 13"
echo "reproducible: $n files identical across two builds"

# 2. lintian: binary and source, pedantic; every E:, W: (and I:) is a failure.
lintian -I --pedantic --fail-on none "$scratch/a/usdtkit_${version}_$arch.changes" \
	"$scratch/a/usdtkit_$version.dsc" >"$scratch/lintian.txt" 2>&1 || true
grep -E '^[EWIP]: ' "$scratch/lintian.txt" >"$scratch/tags" || true
[ ! -s "$scratch/tags" ] || { cat "$scratch/tags" >&2; fail "lintian tags (above)"; }
# Anything else it says (an error of lintian itself), bar its note on root.
grep -v -e '^running with root privileges' -e '^$' "$scratch/lintian.txt" >"$scratch/other" || true
[ ! -s "$scratch/other" ] || { cat "$scratch/other" >&2; fail "lintian: (above)"; }
echo "lintian: no tags (source and binary, -I --pedantic)"

# 3. What each package holds, and its relations.
# (the examples, a tree of their own, are checked apart)
ex=/usr/share/doc/usdtkit-dtrace/examples
contents() { dpkg-deb -c "$1" | awk '{ print $6 }' | grep -v '/$' | sed 's|^\./|/|' | sort; }
expect_files() { # deb, then the files
	deb=$1
	shift
	printf '%s\n' "$@" | sort >"$scratch/want"
	contents "$deb" | grep -v "^$ex/" >"$scratch/have"
	diff -u "$scratch/want" "$scratch/have" || fail "${deb##*/} holds other files than packaging/README.md says"
}
d=$scratch/a
doc() { echo "/usr/share/doc/$1/changelog.gz"; echo "/usr/share/doc/$1/copyright"; }
expect_files "$d/usdtkit-sdt-dev_${version}_all.deb" /usr/include/sys/sdt.h /usr/share/pkgconfig/usdtkit.pc \
	/usr/share/man/man3/sdt.h.3.gz $(doc usdtkit-sdt-dev)
contents "$d/usdtkit-dtrace_${version}_$arch.deb" | grep -qx "$ex/quickstart/quickstart.d" ||
	fail "usdtkit-dtrace has no examples"
expect_files "$d/usdtkit-dtrace_${version}_$arch.deb" /usr/bin/dtrace /usr/share/man/man1/dtrace.1.gz \
	/usr/share/cmake/usdtkit/usdtkitConfig.cmake /usr/share/cmake/usdtkit/usdtkitConfigVersion.cmake \
	/usr/share/cmake/usdtkit/usdtkit-null-header.cmake /usr/share/aclocal/usdtkit.m4 \
	/usr/share/usdtkit/usdtkit.mk /usr/share/usdtkit/usdtkit-null-header.awk $(doc usdtkit-dtrace)
expect_files "$d/usdtkit-helperd_${version}_$arch.deb" /usr/sbin/usdtkit-helperd /usr/bin/usdtkit-probes \
	/lib/systemd/system/usdtkit-helperd.service /lib/systemd/system/usdtkit-helperd.socket \
	/usr/share/man/man8/usdtkit-helperd.8.gz /usr/share/man/man1/usdtkit-probes.1.gz \
	/usr/share/lintian/overrides/usdtkit-helperd $(doc usdtkit-helperd)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=/usr/lib/$ma
expect_files "$d/libusdtkit-runtime0_${version}_$arch.deb" "$lib/libusdtkit-runtime.so.0" \
	"$lib/libusdtkit-runtime.so.0.1.0" $(doc libusdtkit-runtime0)
expect_files "$d/libusdtkit-runtime-dev_${version}_$arch.deb" /usr/include/usdtkit/runtime.h \
	"$lib/libusdtkit-runtime.so" "$lib/pkgconfig/usdtkit-runtime.pc" /usr/share/man/man3/usdtkit-runtime.3.gz \
	$(doc libusdtkit-runtime-dev)
expect_files "$d/libstapsdt0_${version}_$arch.deb" "$lib/libstapsdt.so.0" "$lib/libstapsdt.so.0.1.1" \
	$(doc libstapsdt0)
expect_files "$d/libstapsdt-dev_${version}_$arch.deb" /usr/include/libstapsdt.h "$lib/libstapsdt.so" \
	"$lib/pkgconfig/libstapsdt.pc" $(doc libstapsdt-dev)
py=/usr/lib/python3/dist-packages/usdtkit
expect_files "$d/python3-usdtkit_${version}_all.deb" $py/__init__.py $py/_library.py $(doc python3-usdtkit)
field() { dpkg-deb -f "$1" "$2"; }
dt=$d/usdtkit-dtrace_${version}_$arch.deb
[ "$(field "$dt" Provides)" = "systemtap-sdt-dev (= 4.8)" ] || fail "usdtkit-dtrace Provides: $(field "$dt" Provides)"
[ "$(field "$dt" Conflicts)" = systemtap-sdt-dev ] || fail "usdtkit-dtrace Conflicts: $(field "$dt" Conflicts)"
[ "$(field "$dt" Replaces)" = systemtap-sdt-dev ] || fail "usdtkit-dtrace Replaces: $(field "$dt" Replaces)"
field "$dt" Depends | grep -q "usdtkit-sdt-dev (= $version)" || fail "usdtkit-dtrace does not depend on its header"
# build machines install usdtkit-dtrace for -h and -G: clang (dtrace -n/-s, its engine) only recommended
! field "$dt" Depends | grep -q clang || fail "usdtkit-dtrace Depends on clang: $(field "$dt" Depends)"
field "$dt" Recommends | grep -q clang || fail "usdtkit-dtrace does not recommend clang: $(field "$dt" Recommends)"
[ "$(field "$dt" Multi-Arch)" = foreign ] || fail "usdtkit-dtrace is not Multi-Arch: foreign"
sd=$d/usdtkit-sdt-dev_${version}_all.deb
[ "$(field "$sd" Multi-Arch)" = foreign ] || fail "usdtkit-sdt-dev is not Multi-Arch: foreign"
[ -z "$(field "$sd" Conflicts)" ] || fail "usdtkit-sdt-dev must not Conflict (it would hit usdtkit-dtrace's Provides)"
# The maintainer scripts: the socket enabled and started, the service
# restarted after an upgrade and not stopped before it.
hd=$d/usdtkit-helperd_${version}_$arch.deb
mkdir "$scratch/ctl"
dpkg-deb -e "$hd" "$scratch/ctl"
grep -q 'deb-systemd-helper.*enable.*usdtkit-helperd.socket' "$scratch/ctl/postinst" || fail "postinst does not enable the socket"
grep -q 'try-restart.*usdtkit-helperd' "$scratch/ctl/postinst" || fail "postinst does not restart the daemon after an upgrade"
! grep -q 'deb-systemd-invoke stop' "$scratch/ctl/preinst" 2>/dev/null || fail "preinst stops the daemon before an upgrade"
# The shared libraries: Multi-Arch: same, each -dev on its library of the
# very version, libstapsdt0 on the runtime library through its symbols
# file, the symbols files in the packages (dpkg-gensymbols -c4 checked them
# against the exports during the build) and listing every function of
# <usdtkit/runtime.h>.
rt=$d/libusdtkit-runtime0_${version}_$arch.deb
rtdev=$d/libusdtkit-runtime-dev_${version}_$arch.deb
st=$d/libstapsdt0_${version}_$arch.deb
stdev=$d/libstapsdt-dev_${version}_$arch.deb
pyd=$d/python3-usdtkit_${version}_all.deb
for p in "$rt" "$rtdev" "$st" "$stdev"; do
	[ "$(field "$p" Multi-Arch)" = same ] || fail "${p##*/} is not Multi-Arch: same"
done
[ "$(field "$rtdev" Depends)" = "libusdtkit-runtime0 (= $version)" ] ||
	fail "libusdtkit-runtime-dev Depends: $(field "$rtdev" Depends)"
[ "$(field "$stdev" Depends)" = "libstapsdt0 (= $version)" ] || fail "libstapsdt-dev Depends: $(field "$stdev" Depends)"
field "$st" Depends | grep -q 'libusdtkit-runtime0 (>= 0\.1\.0)' ||
	fail "libstapsdt0 does not depend on libusdtkit-runtime0: $(field "$st" Depends)"
[ "$(field "$pyd" Depends)" = "libusdtkit-runtime0 (>= $version), python3:any" ] ||
	fail "python3-usdtkit Depends: $(field "$pyd" Depends)"
[ "$(field "$pyd" Architecture)" = all ] || fail "python3-usdtkit is not Architecture: all"
for p in "$rt" "$st"; do
	c=$scratch/ctl-${p##*/}
	mkdir "$c"
	dpkg-deb -e "$p" "$c"
	[ -s "$c/symbols" ] || fail "${p##*/} has no symbols file"
	grep -qx 'activate-noawait ldconfig' "$c/triggers" || fail "${p##*/} does not trigger ldconfig"
done
cmp -s "$scratch/ctl-${rt##*/}/symbols" "$top/debian/libusdtkit-runtime0.symbols" ||
	fail "libusdtkit-runtime0's symbols are not debian/libusdtkit-runtime0.symbols"
sed -n 's/^ \(usdtkit_[a-z_]*\)@USDTKIT_RUNTIME_0 .*/\1/p' "$top/debian/libusdtkit-runtime0.symbols" >"$scratch/syms"
grep -o '^[a-z].*[ *]\(usdtkit_[a-z_]*\)(' "$top/runtime/usdtkit/runtime.h" | sed 's/.*[ *]\(usdtkit_[a-z_]*\)(/\1/' |
	sort -u >"$scratch/decls"
[ "$(wc -l <"$scratch/decls")" -ge 15 ] || fail "read only $(wc -l <"$scratch/decls") functions from runtime.h"
diff -u "$scratch/decls" "$scratch/syms" || fail "the symbols file and <usdtkit/runtime.h> list other functions"
mkdir "$scratch/ctl-py"
dpkg-deb -e "$pyd" "$scratch/ctl-py"
grep -q 'py3compile -p python3-usdtkit' "$scratch/ctl-py/postinst" || fail "python3-usdtkit does not byte-compile"
grep -q 'py3clean -p python3-usdtkit' "$scratch/ctl-py/prerm" || fail "python3-usdtkit does not remove its bytecode"
echo "contents and relations as documented"

# 4. Hardening: PIE, full RELRO, stack protector, fortify (the libraries:
# the same but PIE).
mkdir "$scratch/x"
for f in "$dt" "$hd" "$rt" "$st"; do dpkg-deb -x "$f" "$scratch/x"; done
for b in usr/bin/dtrace usr/bin/usdtkit-probes usr/sbin/usdtkit-helperd \
	"${lib#/}/libusdtkit-runtime.so.0.1.0" "${lib#/}/libstapsdt.so.0.1.1"; do
	f=$scratch/x/$b
	case $b in *.so.*) ;; *) readelf -h "$f" | grep -q 'Type:.*DYN' || fail "$b is not PIE" ;; esac
	readelf -l "$f" | grep -q GNU_RELRO || fail "$b has no RELRO"
	readelf -d "$f" | grep -q 'FLAGS.*BIND_NOW' || fail "$b is not linked -z now"
	readelf -W --dyn-syms "$f" | grep -q '__stack_chk_fail' || fail "$b has no stack protector"
	readelf -W --dyn-syms "$f" | grep -q '__[a-z]*_chk@' || fail "$b uses no fortified function"
done
echo "hardened: PIE, RELRO, BIND_NOW, stack protector, fortify (3 programs, 2 libraries)"
