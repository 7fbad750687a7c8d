#!/bin/sh
# The RPM spec, checked as far as a Debian machine allows (the test
# packaging/rpm-check): rpmbuild -bb of packaging/rpm/usdtkit.spec from
# HEAD (git archive), with Debian's rpm (--nodeps: its database holds no
# Fedora package to satisfy BuildRequires); the eight packages hold what
# the spec's %files say and provide SystemTap's and libstapsdt's names, the
# -devel ones require their library of the same build; rpmlint finds nothing
# beyond usdtkit.rpmlintrc's filters, each of which says why.
#
#   sh packaging/rpm/check.sh
#
# About a minute. Needs rpm and rpmlint (scripts/deps.sh).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
for c in rpmbuild rpmlint git dpkg-parsechangelog; do
	command -v "$c" >/dev/null || { echo "rpm-check: $c is not installed (scripts/deps.sh installs it)" >&2; exit 1; }
done
fail() { echo "rpm-check: FAIL: $*" >&2; exit 1; }
spec=$top/packaging/rpm/usdtkit.spec
version=$(sed -n 's/^Version:[[:space:]]*//p' "$spec")
[ "$version" = "$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)" ] ||
	fail "the spec's Version ($version) is not debian/changelog's"
grep -q "version : '$version'" "$top/meson.build" || fail "the spec's Version ($version) is not meson.build's"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-rpm.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/SOURCES"
git -C "$top" archive --prefix="usdtkit-$version/" -o "$scratch/SOURCES/usdtkit-$version.tar.gz" HEAD
rpmbuild -bb --nodeps --define "_topdir $scratch" "$spec" >"$scratch/build.log" 2>&1 ||
	{ tail -40 "$scratch/build.log" >&2; fail "rpmbuild -bb"; }
arch=$(rpm --eval '%{_arch}')
sd=$scratch/RPMS/noarch/usdtkit-sdt-devel-$version-1.noarch.rpm
dt=$scratch/RPMS/$arch/usdtkit-dtrace-$version-1.$arch.rpm
hd=$scratch/RPMS/$arch/usdtkit-helperd-$version-1.$arch.rpm
rt=$scratch/RPMS/$arch/usdtkit-runtime-$version-1.$arch.rpm
rtdev=$scratch/RPMS/$arch/usdtkit-runtime-devel-$version-1.$arch.rpm
st=$scratch/RPMS/$arch/usdtkit-libstapsdt-$version-1.$arch.rpm
stdev=$scratch/RPMS/$arch/usdtkit-libstapsdt-devel-$version-1.$arch.rpm
py=$scratch/RPMS/noarch/python3-usdtkit-$version-1.noarch.rpm
all="$sd $dt $hd $rt $rtdev $st $stdev $py"
for r in $all; do [ -f "$r" ] || fail "no ${r##*/}"; done
[ "$(find "$scratch/RPMS" -name '*.rpm' | wc -l)" -eq 8 ] || fail "other packages than the eight built"

# (the %doc files apart: their directory's name differs between rpm's and
# Fedora's defaults)
files() { rpm -qpl "$1" 2>/dev/null | grep -v -e '^/usr/lib/\.build-id' -e '^/usr/share/licenses/' -e '^/usr/share/doc/'; }
expect() { # rpm, files...
	r=$1
	shift
	printf '%s\n' "$@" | sort >"$scratch/want"
	files "$r" | sort >"$scratch/have"
	diff -u "$scratch/want" "$scratch/have" || fail "${r##*/} holds other files than expected"
}
expect "$sd" /usr/include/sys/sdt.h /usr/share/pkgconfig/usdtkit.pc /usr/share/man/man3/sdt.h.3
expect "$dt" /usr/bin/dtrace /usr/share/man/man1/dtrace.1 /usr/share/cmake/usdtkit \
	/usr/share/usdtkit /usr/share/cmake/usdtkit/usdtkitConfig.cmake \
	/usr/share/cmake/usdtkit/usdtkitConfigVersion.cmake /usr/share/cmake/usdtkit/usdtkit-null-header.cmake \
	/usr/share/aclocal/usdtkit.m4 /usr/share/usdtkit/usdtkit.mk /usr/share/usdtkit/usdtkit-null-header.awk
unitdir=$(rpm --eval '%{?_unitdir}%{!?_unitdir:/usr/lib/systemd/system}')
expect "$hd" /usr/sbin/usdtkit-helperd /usr/bin/usdtkit-probes "$unitdir/usdtkit-helperd.service" \
	"$unitdir/usdtkit-helperd.socket" /usr/share/man/man8/usdtkit-helperd.8 /usr/share/man/man1/usdtkit-probes.1
libdir=$(rpm --eval '%{_libdir}')
expect "$rt" "$libdir/libusdtkit-runtime.so.0" "$libdir/libusdtkit-runtime.so.0.1.0"
expect "$rtdev" /usr/include/usdtkit /usr/include/usdtkit/runtime.h "$libdir/libusdtkit-runtime.so" \
	"$libdir/pkgconfig/usdtkit-runtime.pc" /usr/share/man/man3/usdtkit-runtime.3
expect "$st" "$libdir/libstapsdt.so.0" "$libdir/libstapsdt.so.0.1.1"
expect "$stdev" /usr/include/libstapsdt.h "$libdir/libstapsdt.so" "$libdir/pkgconfig/libstapsdt.pc"
# (bytecode too where rpm's brp-python-bytecompile runs: Fedora's buildroot)
sitelib=$(rpm --eval '%{?python3_sitelib}')
[ -n "$sitelib" ] || sitelib=/usr/lib/python$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages
files "$py" | grep -v '/__pycache__' | sort >"$scratch/have"
printf '%s\n' "$sitelib/usdtkit" "$sitelib/usdtkit/__init__.py" "$sitelib/usdtkit/_library.py" >"$scratch/want"
diff -u "$scratch/want" "$scratch/have" || fail "${py##*/} holds other files than expected"
rpm -qpd "$rt" 2>/dev/null | grep -q '/README\.md$' || fail "usdtkit-runtime has no README"
rpm -qpd "$py" 2>/dev/null | grep -q '/README\.md$' || fail "python3-usdtkit has no README"
rpm -qp --requires "$rtdev" 2>/dev/null | grep -qx "usdtkit-runtime(x86-64) = $version-1" ||
	[ "$arch" != x86_64 ] || fail "runtime-devel does not require its library"
rpm -qp --requires "$stdev" 2>/dev/null | grep -qx "usdtkit-libstapsdt(x86-64) = $version-1" ||
	[ "$arch" != x86_64 ] || fail "libstapsdt-devel does not require its library"
rpm -qp --requires "$py" 2>/dev/null | grep -qx "usdtkit-runtime = $version-1" || fail "python3-usdtkit does not require the library"
rpm -qp --provides "$st" 2>/dev/null | grep -qx 'libstapsdt = 0.1.1' || fail "usdtkit-libstapsdt does not provide libstapsdt"
rpm -qp --provides "$st" 2>/dev/null | grep -q '^libstapsdt\.so\.0()' || fail "usdtkit-libstapsdt has no soname provide"
rpm -qp --requires "$st" 2>/dev/null | grep -q '^libusdtkit-runtime\.so\.0(USDTKIT_RUNTIME_0)' ||
	fail "usdtkit-libstapsdt does not require libusdtkit-runtime's symbol version"
rpm -qp --provides "$stdev" 2>/dev/null | grep -qx 'pkgconfig(libstapsdt) = 0.1.1' || fail "no pkgconfig(libstapsdt)"
rpm -qp --provides "$rtdev" 2>/dev/null | grep -qx "pkgconfig(usdtkit-runtime) = $version" || fail "no pkgconfig(usdtkit-runtime)"
rpm -qp --provides "$sd" 2>/dev/null | grep -qx 'systemtap-sdt-devel = 5.4' || fail "sdt-devel does not provide systemtap-sdt-devel"
rpm -qp --provides "$dt" 2>/dev/null | grep -qx 'systemtap-sdt-dtrace = 5.4' || fail "dtrace does not provide systemtap-sdt-dtrace"
rpm -qp --provides "$dt" 2>/dev/null | grep -qx 'dtrace = 5.4' || fail "dtrace does not provide dtrace"
rpm -qp --conflicts "$dt" 2>/dev/null | grep -qx 'systemtap-sdt-dtrace' || fail "dtrace does not conflict with systemtap-sdt-dtrace"
rpm -qp --requires "$dt" 2>/dev/null | grep -q "^usdtkit-sdt-devel = $version" || fail "dtrace does not require its header"
# The command works from the package.
mkdir "$scratch/x"
(cd "$scratch/x" && rpm2cpio "$dt" | cpio -id --quiet)
"$scratch/x/usr/bin/dtrace" -V | grep -q "usdtkit $version" || fail "the packaged dtrace -V"

# The libraries from the packages: the C one loads, the Python module finds it.
for r in "$rt" "$st" "$py"; do (cd "$scratch/x" && rpm2cpio "$r" | cpio -id --quiet); done
LD_LIBRARY_PATH=$scratch/x$libdir USDTKIT_DISABLE=1 PYTHONPATH=$scratch/x$sitelib python3 -c '
import usdtkit
p = usdtkit.Provider("rpmcheck")
p.add_probe("hit", "int")
p.load()
assert p.loaded
p.destroy()
' || fail "python3-usdtkit over the packaged library"
rpmlint -r "$top/packaging/rpm/usdtkit.rpmlintrc" $all "$spec" >"$scratch/lint" 2>&1 || true
grep -E ': [EW]: ' "$scratch/lint" >"$scratch/tags" || true
[ ! -s "$scratch/tags" ] || { cat "$scratch/tags" >&2; fail "rpmlint (above)"; }
grep -q ' 0 errors, 0 warnings' "$scratch/lint" || { cat "$scratch/lint" >&2; fail "rpmlint's summary"; }
echo "rpm: 8 packages built ($(cd "$scratch/RPMS" && ls ./*/*.rpm | sed 's|.*/||' | tr '\n' ' ')); rpmlint clean"
