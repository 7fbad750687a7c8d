#!/bin/bash
# The build options a packager turns (meson_options.txt), each in a fresh
# build of this tree:
#  1. -Dhelper=disabled -Dlibdwarf=disabled (-Dseccomp then does not
#     matter): what a build machine needs and nothing else. `meson install`
#     gives exactly dtrace, <sys/sdt.h>, usdtkit.pc and the two man pages
#     (no daemon, no usdtkit-probes, no units); its dtrace -h header is the
#     full build's byte for byte; a program linked with its -G object runs
#     and carries its probes and metadata note, but no drti (the object
#     registers nothing: no constructor, no socket opened); the runtime
#     libraries, their headers, .pc files, Python package and manual are
#     installed too, and a provider loaded with that libusdtkit-runtime
#     registers nothing either;
#  2. -Dseccomp=disabled -Dlibdwarf=disabled with the helper: the daemon
#     builds without libseccomp and says so when it starts a parser;
#  3. `meson setup` prints no warning (deprecations included) in either;
#  4. a meson project with usdtkit as its subproject: find_program('dtrace')
#     gives the subproject's command and dependency('usdtkit') its header,
#     and the program built with them carries its probes.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"

setup() { # DIR OPTIONS...
	local dir=$1
	shift
	meson setup "$dir" "$USDTKIT_SRCDIR" -Dwerror=true "$@" >"$dir.setup" 2>&1 ||
		{ cat "$dir.setup" >&2; fail "meson setup $*"; }
	if grep -iE 'warning|deprecat' "$dir.setup" >&2; then fail "meson setup $* warned"; fi
}

# --- 1. no helper ---
B="$T/min"
setup "$B" --prefix=/usr -Dhelper=disabled -Dlibdwarf=disabled
grep -q 'usdtkit-helperd' "$B/build.ninja" && fail "-Dhelper=disabled still builds the daemon"
ninja -C "$B" dtrace/dtrace runtime/libusdtkit-runtime.so.0.1.0 runtime/stapsdt/libstapsdt.so.0.1.1 \
	>"$T/min.ninja" 2>&1 || { cat "$T/min.ninja" >&2; fail "the minimal build"; }
DESTDIR="$T/root" meson install -C "$B" --no-rebuild >"$T/min.install" 2>&1 ||
	{ cat "$T/min.install" >&2; fail "meson install of the minimal build"; }
(cd "$T/root" && find . \( -type f -o -type l \) | sort) >"$T/files"
L=$(meson introspect "$B" --buildoptions |
	python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "libdir"))')
cat >"$T/files.expected" <<EOT
./usr/bin/dtrace
./usr/include/libstapsdt.h
./usr/include/sys/sdt.h
./usr/include/usdtkit/runtime.h
./usr/$L/libstapsdt.so
./usr/$L/libstapsdt.so.0
./usr/$L/libstapsdt.so.0.1.1
./usr/$L/libusdtkit-runtime.so
./usr/$L/libusdtkit-runtime.so.0
./usr/$L/libusdtkit-runtime.so.0.1.0
./usr/$L/pkgconfig/libstapsdt.pc
./usr/$L/pkgconfig/usdtkit-runtime.pc
./usr/lib/python3/dist-packages/usdtkit/__init__.py
./usr/lib/python3/dist-packages/usdtkit/_library.py
./usr/share/man/man1/dtrace.1
./usr/share/man/man3/sdt.h.3
./usr/share/man/man3/usdtkit-runtime.3
./usr/share/pkgconfig/usdtkit.pc
./usr/share/cmake/usdtkit/usdtkitConfig.cmake
./usr/share/cmake/usdtkit/usdtkitConfigVersion.cmake
./usr/share/cmake/usdtkit/usdtkit-null-header.cmake
./usr/share/aclocal/usdtkit.m4
./usr/share/usdtkit/usdtkit.mk
./usr/share/usdtkit/usdtkit-null-header.awk
EOT
sort -o "$T/files.expected" "$T/files.expected"
diff "$T/files.expected" "$T/files" >&2 || fail "the minimal build installs other files"
MIN="$T/root/usr/bin/dtrace"

cat >"$T/p.d" <<'EOT'
provider minp {
	probe tick(int, char *);
};
EOT
mkdir "$T/hmin" "$T/hfull" # one output name: the include guard is made from it
"$MIN" -h -s "$T/p.d" -o "$T/hmin/p.h" || fail "minimal dtrace -h"
"$DTRACE" -h -s "$T/p.d" -o "$T/hfull/p.h" || fail "full dtrace -h"
cmp "$T/hmin/p.h" "$T/hfull/p.h" || fail "the minimal build's header differs from the full build's"
cat >"$T/m.c" <<'EOT'
#include <stdio.h>
#include "p.h"
int main(void)
{
	MINP_TICK(7, "seven");
	printf("enabled=%d\n", (int)MINP_TICK_ENABLED());
	return 0;
}
EOT
gcc -O2 -I"$USDTKIT_SRCDIR/include" -I"$T/hmin" -c "$T/m.c" -o "$T/m.o" || fail "compiling the program"
"$MIN" -G -s "$T/p.d" -o "$T/p-min.o" "$T/m.o" || fail "minimal dtrace -G"
"$DTRACE" -G -s "$T/p.d" -o "$T/p-full.o" "$T/m.o" || fail "full dtrace -G"
gcc "$T/m.o" "$T/p-min.o" -o "$T/m" || fail "linking the program"
# The full object has drti's constructor; the minimal one has none of it.
nm "$T/p-full.o" | grep -q usdt_drti_init || fail "the full -G object has no drti (test broken)"
if nm "$T/p-min.o" | grep -E "usdt_drti_(init|attempt|request)" >&2; then fail "the minimal -G object carries drti"; fi
readelf -S "$T/p-min.o" | grep -q '\.init_array' && fail "the minimal -G object has a constructor"
readelf -n "$T/m" | grep -q 'NT_STAPSDT' || fail "no probe notes in the program"
readelf -S "$T/m" | grep -q '\.note\.usdtkit' || fail "no metadata note in the program"
# Run with a helper socket that logs any connection: none may come.
python3 - "$T/helper.sock" "$T/conn" <<'EOT' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(8); s.settimeout(0.1)
open(sys.argv[2] + '.ready', 'w').close()
end = time.time() + 30
while time.time() < end:
    try:
        c, _ = s.accept()
        open(sys.argv[2], 'a').write('connected\n')
    except socket.timeout:
        pass
EOT
listener=$!
at_exit "kill $listener 2>/dev/null"
wait_until 10 "the stand-in helper socket" test -e "$T/conn.ready"
out=$(USDTKIT_HELPER_SOCKET="$T/helper.sock" "$T/m") || fail "the program failed"
expect_eq "$out" "enabled=0" "the program's output"
cat >"$T/rt.c" <<'EOT'
#include <stdio.h>
#include <usdtkit/runtime.h>
int main(void)
{
	usdtkit_provider *p = usdtkit_provider_create("minrt", NULL);
	int r = usdtkit_probe_add(p, "tick", 1, USDTKIT_INT32) ? usdtkit_provider_load(p) : -1;
	printf("load %d\n", r);
	usdtkit_provider_destroy(p);
	return r != 0;
}
EOT
gcc -o "$T/rt" "$T/rt.c" -I"$T/root/usr/include" -L"$T/root/usr/$L" -lusdtkit-runtime ||
	fail "building against the minimal build's runtime library"
out=$(USDTKIT_HELPER_SOCKET="$T/helper.sock" LD_LIBRARY_PATH="$T/root/usr/$L" "$T/rt") ||
	fail "the runtime provider program failed"
expect_eq "$out" "load 0" "the runtime provider program's output"
sleep 0.3 # a connection from a constructor would have come before main returned
[ ! -e "$T/conn" ] || fail "the minimal build's programs connected to the helper socket"
echo "ok: -Dhelper=disabled: $(wc -l <"$T/files") files installed, -h identical, -G without drti"

# --- 2. the daemon without libseccomp ---
B2="$T/noseccomp"
setup "$B2" -Dseccomp=disabled -Dlibdwarf=disabled
ninja -C "$B2" kernel-helper/helperd/usdtkit-helperd dtrace/dtrace >"$T/ns.ninja" 2>&1 ||
	{ cat "$T/ns.ninja" >&2; fail "the build without libseccomp"; }
if ldd "$B2/kernel-helper/helperd/usdtkit-helperd" | grep seccomp >&2; then
	fail "-Dseccomp=disabled still links libseccomp"
fi
grep -q 'built without libseccomp' "$B2/kernel-helper/helperd/usdtkit-helperd" ||
	fail "the daemon built without libseccomp does not say so"
if ldd "$B2/dtrace/dtrace" | grep dwarf >&2; then fail "-Dlibdwarf=disabled still links libdwarf"; fi
echo "ok: -Dseccomp=disabled and -Dlibdwarf=disabled build without those libraries"

# --- 4. usdtkit as a meson subproject ---
P="$T/proj"
mkdir -p "$P/subprojects"
ln -s "$USDTKIT_SRCDIR" "$P/subprojects/usdtkit"
cp "$T/p.d" "$P/p.d"
cp "$T/m.c" "$P/m.c"
cat >"$P/meson.build" <<'EOT'
project('usesub', 'c')
subproject('usdtkit', default_options : ['helper=disabled', 'libdwarf=disabled'])
dtrace = find_program('dtrace')
hdr = custom_target('p.h', input : 'p.d', output : 'p.h',
  command : [dtrace, '-h', '-x', 'typecheck', '-s', '@INPUT@', '-o', '@OUTPUT@'])
objs = static_library('objs', 'm.c', hdr, dependencies : dependency('usdtkit'))
prov = custom_target('p.o', input : ['p.d', objs.extract_all_objects(recursive : false)],
  output : 'p.o', command : [dtrace, '-G', '-o', '@OUTPUT@', '-s', '@INPUT@'])
executable('app', prov, link_whole : objs)
EOT
meson setup "$P/b" "$P" >"$T/sub.setup" 2>&1 || { cat "$T/sub.setup" >&2; fail "setting up a project with usdtkit as a subproject"; }
if grep -iE 'warning|deprecat' "$T/sub.setup" >&2; then fail "the subproject setup warned"; fi
grep -q "Program dtrace found: YES (overridden)" "$T/sub.setup" ||
	{ cat "$T/sub.setup" >&2; fail "find_program('dtrace') did not take the subproject's"; }
ninja -C "$P/b" app >"$T/sub.ninja" 2>&1 || { cat "$T/sub.ninja" >&2; fail "building with the subproject"; }
grep -q "subprojects/usdtkit/dtrace/dtrace" "$P/b/build.ninja" || fail "the header was not made by the subproject's dtrace"
readelf -n "$P/b/app" | grep -q 'Name: tick' || fail "the program built with the subproject has no probe"
expect_eq "$("$P/b/app")" "enabled=0" "the program built with the subproject"
echo "ok: usdtkit as a meson subproject: find_program('dtrace') and dependency('usdtkit')"
