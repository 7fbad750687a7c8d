#!/bin/bash
# libvirt from Debian's source package (9.0.0 in Debian 12), built by its
# own meson build (-Ddtrace=enabled: `dtrace -h` for libvirt_probes.h and
# libvirt_qemu_probes.h, `dtrace -G -s` on the .d files alone, linked into
# libvirt.so, libvirtd and the QEMU driver) with SystemTap's tools and with
# usdtkit's, at Debian's -O2 -g with libvirt's own warning flags. Issue 34:
# libvirt's .d files declare `int` where its code passes pointers, and a
# header that checked types added 187 warnings to its Debian build and
# stopped its build from git (-Werror). Compared here:
#  - both build, with the same number of warnings: those mentioning sdt.h
#    or a generated header, and every compiler warning of the log;
#  - the notes per provider of libvirt.so, libvirtd and the QEMU driver:
#    equal in both builds, and equal to the archive's binary packages
#    (libvirt0, libvirt-daemon, libvirt-daemon-driver-qemu);
#  - libvirt's upstream tree (Debian's orig tarball, without Debian's
#    patches) with -Dwerror=true, as libvirt builds from git: it builds with
#    usdtkit's tools as with SystemTap's.
# Heavy (three builds of most of libvirt): only through
# `sh scripts/realworld.sh libvirt`, not in meson test.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/realworld/lib.sh"

rw_project libvirt
rw_need_pkgs meson ninja-build pkg-config gcc python3 python3-docutils xsltproc libxml2-utils \
	libglib2.0-dev libxml2-dev libgnutls28-dev libtirpc-dev libyajl-dev libcap-ng-dev \
	libselinux1-dev libudev-dev libnl-3-dev libnl-route-3-dev libpciaccess-dev libsasl2-dev dpkg-dev
rw_fetch libvirt

# What carries probes (Debian's libvirt0, libvirt-daemon and
# libvirt-daemon-driver-qemu), as built here and as installed by the archive.
SOVER=$(sed -nE "s/^ *version: '([0-9]+\.[0-9]+\.[0-9]+)'.*/\1/p" "$RW_SRC/meson.build" | head -1)
[ -n "$SOVER" ] || fail "no version in libvirt's meson.build"
IFS=. read -r major minor micro <<<"$SOVER"
LIBSO=libvirt.so.0.$((major * 1000 + minor)).$micro # (libvirt: 9.0.0 gives 0.9000.0)
BUILT="src/$LIBSO src/libvirtd src/libvirt_driver_qemu.so"
ARCH_FILES="usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/$LIBSO usr/sbin/libvirtd
usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libvirt/connection-driver/libvirt_driver_qemu.so"

# Debian's flags (dpkg-buildflags) and the drivers whose binaries carry
# probes, with SASL and polkit: 6 of libvirtd's 9 sites are in their
# authentication paths (a first run without them gave 41, 3 and 8 sites
# with either tool, the archive 41, 9 and 8); the rest of libvirt's optional
# features are off.
build_libvirt() { # DIR
	CFLAGS="$(dpkg-buildflags --get CFLAGS) $RW_INC" LDFLAGS="$(dpkg-buildflags --get LDFLAGS)" \
		meson setup . "$RW_SRC" --buildtype=plain --auto-features=disabled -Ddtrace=enabled \
		-Ddriver_qemu=enabled -Ddriver_remote=enabled -Ddriver_libvirtd=enabled -Dyajl=enabled \
		-Dlibnl=enabled -Dudev=enabled -Dpciaccess=enabled -Dcapng=enabled -Dselinux=enabled \
		-Dsasl=enabled -Dpolkit=enabled \
		-Ddocs=disabled -Dtests=disabled -Dexpensive_tests=disabled &&
		ninja -j2 -v
}
for t in $TOOLS; do rw_build "$t" build_libvirt; done
rw_check_builds
for t in $TOOLS; do
	rw_tool_env "$t"
	grep -qE "dtrace.* -G " "$PW/$t.log" || rw_fail "$t: the build did not run dtrace -G"
	grep -qF "$RW_DTRACE" "$PW/$t.log" || rw_fail "$t: the build did not run $RW_DTRACE"
done
rw_check_warnings libvirt_probes.h libvirt_qemu_probes.h
[ "$all_usdtkit" = "$all_systemtap" ] ||
	rw_fail "compiler warnings in the whole log: $all_usdtkit with usdtkit, $all_systemtap with SystemTap"
# shellcheck disable=SC2086
rw_check_notes $BUILT

# The archive's binaries of the same version.
arch=$PW/archive
if [ ! -f "$arch.ok" ]; then
	rm -rf "$arch" && mkdir -p "$arch"
	(cd "$arch" && apt-get download "libvirt0=$RW_VERSION" "libvirt-daemon=$RW_VERSION" \
		"libvirt-daemon-driver-qemu=$RW_VERSION") >"$T/download.log" 2>&1 ||
		{ cat "$T/download.log" >&2; fail "apt-get download of libvirt's binary packages"; }
	for deb in "$arch"/*.deb; do dpkg-deb -x "$deb" "$arch/root"; done
	touch "$arch.ok"
fi
files=()
for f in $ARCH_FILES; do files+=("$arch/root/$f"); done
"${ANALYZE[@]}" notes "${files[@]}" >"$PW/archive.notes" || fail "readelf -n on the archive's binaries"
rw_row "probe sites (notes) per provider, Debian's binary packages" "$(rw_notes_text "$PW/archive.notes")" \
	"$(rw_notes_text "$PW/usdtkit.notes")"
diff -u "$PW/archive.notes" "$PW/usdtkit.notes" >&2 ||
	rw_fail "notes per provider differ from the archive's binaries (archive - , usdtkit +)"
# The same per file (one provider, libvirt, in all three): libvirt.so,
# libvirtd, the QEMU driver.
per_file() { # FILE...
	local f
	for f in "$@"; do readelf -n --wide "$f" | grep -c 'Provider: ' || true; done | paste -sd' '
}
# shellcheck disable=SC2086
for t in $TOOLS; do eval "pf_$t=\$(cd \"\$PW/$t\" && per_file $BUILT)"; done
pf_archive=$(per_file "${files[@]}")
# shellcheck disable=SC2154
rw_row "probe sites per file: libvirt.so, libvirtd, QEMU driver (archive: $pf_archive)" "$pf_systemtap" \
	"$pf_usdtkit"
# shellcheck disable=SC2154
[ "$pf_systemtap" = "$pf_archive" ] && [ "$pf_usdtkit" = "$pf_archive" ] ||
	rw_fail "sites per file: archive $pf_archive, SystemTap $pf_systemtap, usdtkit $pf_usdtkit"

# Upstream's tree, -Werror as from git, with each tool.
orig=$(find "$RW/src/download-libvirt" -name 'libvirt_*.orig.tar.*' ! -name '*.asc' | head -1)
[ -n "$orig" ] || fail "no orig tarball in $RW/src/download-libvirt"
up=$RW/src/libvirt-upstream-$SOVER
if [ ! -f "$up.ok" ]; then
	rm -rf "$up" && mkdir -p "$up"
	tar -xf "$orig" -C "$up" --strip-components=1 || fail "unpacking $orig"
	touch "$up.ok"
fi
werror_libvirt() { # DIR
	CFLAGS="$RW_INC" meson setup . "$up" -Dwerror=true --auto-features=disabled -Ddtrace=enabled \
		-Ddriver_qemu=enabled -Ddriver_remote=enabled -Ddriver_libvirtd=enabled -Dyajl=enabled \
		-Dsasl=enabled -Dpolkit=enabled -Ddocs=disabled -Dtests=disabled &&
		ninja -j2 "src/$LIBSO" src/libvirtd src/libvirt_driver_qemu.so
}
s=""
for t in $TOOLS; do
	( # shellcheck disable=SC2030 # (a subshell on purpose: rw_build writes under PW)
		PW=$PW/werror
		mkdir -p "$PW"
		rw_build "$t" werror_libvirt
	)
	if [ "$(cat "$PW/werror/$t.rc")" = 0 ]; then
		s="$s	ok ($(cat "$PW/werror/$t.time") s)"
		# -Werror really on where probes fire (the file of issue 34's error).
		grep -E '"command".*-Werror.*vireventglib\.c' "$PW/werror/$t/compile_commands.json" >/dev/null ||
			rw_fail "$t: the -Werror build compiled vireventglib.c without -Werror"
		files=()
		for f in $BUILT; do files+=("$PW/werror/$t/$f"); done
		"${ANALYZE[@]}" notes "${files[@]}" >"$PW/werror/$t.notes" || fail "readelf -n on $t's -Werror build"
	else
		s="$s	FAILED"
		tail -30 "$PW/werror/$t.log" >&2
		rw_fail "upstream libvirt with -Werror failed with $t (log: $PW/werror/$t.log)"
	fi
done
rw_row "upstream tree, -Dwerror=true (as from git)" "$(echo "$s" | cut -f2)" "$(echo "$s" | cut -f3)"
rw_row "probe sites (notes) per provider, -Werror build" "$(rw_notes_text "$PW/werror/systemtap.notes")" \
	"$(rw_notes_text "$PW/werror/usdtkit.notes")"
diff -u "$PW/werror/systemtap.notes" "$PW/werror/usdtkit.notes" >&2 ||
	rw_fail "notes per provider of the -Werror builds differ (SystemTap - , usdtkit +)"
rw_finish
