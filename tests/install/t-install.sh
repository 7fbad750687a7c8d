#!/bin/bash
# meson install gives the layout a distribution ships, and the installed
# usdtkit is usable by other projects through pkg-config:
#  1. a fresh build of this tree with --prefix=$T/prefix, installed: every
#     file and link at its place (bin/dtrace, include/sys/sdt.h, usdtkit.pc,
#     sbin daemon, systemd units, the runtime libraries with their headers,
#     .pc files and links, the usdtkit Python package, the man pages); the
#     .pc files' Cflags, Libs and dtrace variable; the installed tools run; a
#     C program built with `pkg-config usdtkit-runtime`, one with
#     `pkg-config libstapsdt` and the installed Python package each load a
#     provider from the installed libraries;
#  2. the same with DESTDIR: everything under DESTDIR, nothing else;
#  3. -Ddtrace_name=usdtkit-dtrace: the command, its man page and the .pc
#     variable follow the name;
#  4. examples/meson-project, cmake-project and autotools-project, built
#     with the commands of their READMEs against the installed usdtkit only
#     (PKG_CONFIG_PATH, CMAKE_PREFIX_PATH, ACLOCAL_PATH into the prefix; no
#     -I into this tree), with clang (t-buildsys.sh: the same with gcc):
#     run, probes checked in readelf, gdb and bpftrace.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
need_bpftrace
for tool in meson ninja cmake pkg-config gdb autoreconf automake libtoolize; do
	command -v $tool >/dev/null || fail "$tool is not installed (scripts/deps.sh installs it)"
done

P="$T/prefix"
B="$T/build"
# Only what is installed is built (the tests and benchmarks are not needed).
install_targets() {
	ninja -C "$B" "dtrace/$1" kernel-helper/helperd/usdtkit-helperd \
		kernel-helper/tools/usdtkit-probes runtime/libusdtkit-runtime.so.0.1.0 \
		runtime/stapsdt/libstapsdt.so.0.1.1 >"$T/ninja.log" 2>&1 ||
		{ cat "$T/ninja.log" >&2; fail "building the installed targets"; }
}
meson setup "$B" "$USDTKIT_SRCDIR" --prefix="$P" >"$T/setup.log" 2>&1 ||
	{ cat "$T/setup.log" >&2; fail "meson setup --prefix"; }
install_targets dtrace
meson install -C "$B" --no-rebuild >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; fail "meson install"; }

# --- 1. the layout ---
# The library directory is meson's default (Debian: lib/<multiarch>); the
# Python package goes where Debian's python3 puts a prefix's modules
# (bindings/python/meson.build).
L=$(meson introspect "$B" --buildoptions |
	python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "libdir"))')
PY=lib/python3/dist-packages
expected_files() { # root dtrace-name
	cat <<EOF
$1/bin/$2
$1/bin/usdtkit-probes
$1/include/sys/sdt.h
$1/include/usdtkit/runtime.h
$1/include/libstapsdt.h
$1/$L/libusdtkit-runtime.so
$1/$L/libusdtkit-runtime.so.0
$1/$L/libusdtkit-runtime.so.0.1.0
$1/$L/libstapsdt.so
$1/$L/libstapsdt.so.0
$1/$L/libstapsdt.so.0.1.1
$1/$L/pkgconfig/usdtkit-runtime.pc
$1/$L/pkgconfig/libstapsdt.pc
$1/$PY/usdtkit/__init__.py
$1/$PY/usdtkit/_library.py
$1/share/pkgconfig/usdtkit.pc
$1/share/cmake/usdtkit/usdtkitConfig.cmake
$1/share/cmake/usdtkit/usdtkitConfigVersion.cmake
$1/share/cmake/usdtkit/usdtkit-null-header.cmake
$1/share/aclocal/usdtkit.m4
$1/share/usdtkit/usdtkit.mk
$1/share/usdtkit/usdtkit-null-header.awk
$1/lib/systemd/system/usdtkit-helperd.service
$1/lib/systemd/system/usdtkit-helperd.socket
$1/sbin/usdtkit-helperd
$1/share/man/man1/$2.1
$1/share/man/man1/usdtkit-probes.1
$1/share/man/man3/sdt.h.3
$1/share/man/man3/usdtkit-runtime.3
$1/share/man/man8/usdtkit-helperd.8
EOF
}
installed() { find "$1" \( -type f -o -type l \) | sort; }
expect_eq "$(installed "$P")" "$(expected_files "$P" dtrace | sort)" "installed files"
for f in bin/dtrace bin/usdtkit-probes sbin/usdtkit-helperd; do
	[ -x "$P/$f" ] || fail "$f is not executable"
done
cmp -s "$P/include/sys/sdt.h" "$USDTKIT_SRCDIR/include/sys/sdt.h" || fail "installed sdt.h differs"
expect_grep "^ExecStart=$P/sbin/usdtkit-helperd -f\$" "$P/lib/systemd/system/usdtkit-helperd.service" \
	"the service runs the installed daemon"
"$P/bin/dtrace" -V >"$T/v" || fail "installed dtrace -V"
expect_grep "^dtrace: usdtkit $(sed -n "s/^ *version : '\(.*\)',/\1/p" "$USDTKIT_SRCDIR/meson.build")\$" \
	"$T/v" "installed dtrace -V"
"$P/sbin/usdtkit-helperd" --help >"$T/help" || fail "installed usdtkit-helperd --help"
expect_grep '^usage: usdtkit-helperd ' "$T/help" "installed daemon's usage"

export PKG_CONFIG_PATH="$P/share/pkgconfig"
expect_eq "$(pkg-config --variable=dtrace usdtkit)" "$P/bin/dtrace" "usdtkit.pc dtrace variable"
expect_eq "$(pkg-config --cflags usdtkit | sed 's/ *$//')" "-I$P/include" "usdtkit.pc Cflags"
expect_eq "$(pkg-config --libs usdtkit | sed 's/ *$//')" "" "usdtkit.pc Libs (header-only)"
expect_eq "$(pkg-config --modversion usdtkit)" "$("$P/bin/dtrace" -V | sed 's/.* //')" "usdtkit.pc version"
expect_eq "$(readlink "$P/$L/libusdtkit-runtime.so.0")" libusdtkit-runtime.so.0.1.0 "libusdtkit-runtime.so.0 link"
expect_eq "$(readlink "$P/$L/libusdtkit-runtime.so")" libusdtkit-runtime.so.0 "libusdtkit-runtime.so link"
expect_eq "$(readlink "$P/$L/libstapsdt.so.0")" libstapsdt.so.0.1.1 "libstapsdt.so.0 link"
expect_eq "$(readlink "$P/$L/libstapsdt.so")" libstapsdt.so.0 "libstapsdt.so link"

# The runtime libraries through their .pc files, and the Python package.
export PKG_CONFIG_PATH="$P/$L/pkgconfig:$P/share/pkgconfig"
expect_eq "$(pkg-config --cflags --libs usdtkit-runtime | sed 's/ *$//')" "-I$P/include -L$P/$L -lusdtkit-runtime" \
	"usdtkit-runtime.pc Cflags and Libs"
expect_eq "$(pkg-config --modversion usdtkit-runtime)" "$(pkg-config --modversion usdtkit)" "usdtkit-runtime.pc version"
expect_eq "$(pkg-config --cflags --libs libstapsdt | sed 's/ *$//')" "-I$P/include -L$P/$L -lstapsdt" \
	"libstapsdt.pc Cflags and Libs"
expect_eq "$(pkg-config --modversion libstapsdt)" 0.1.1 "libstapsdt.pc version (libstapsdt's release)"
cat >"$T/rt.c" <<'EOT'
#include <stdio.h>
#include <usdtkit/runtime.h>
int main(void)
{
	usdtkit_provider *p = usdtkit_provider_create("tinstall", NULL);
	usdtkit_probe *q = usdtkit_probe_add(p, "hit", 2, USDTKIT_INT32, USDTKIT_STRING);
	int r = usdtkit_provider_load(p);
	printf("load %d, %s has %d arguments\n", r, usdtkit_probe_name(q), usdtkit_probe_nargs(q));
	usdtkit_provider_destroy(p);
	return r != 0;
}
EOT
cat >"$T/st.c" <<'EOT'
#include <stdio.h>
#include <libstapsdt.h>
int main(void)
{
	SDTProvider_t *p = providerInit("tinstallst");
	int r = providerAddProbe(p, "hit", 1, int32) ? providerLoad(p) : -1;
	printf("load %d\n", r);
	providerDestroy(p);
	return r != 0;
}
EOT
# (USDTKIT_DISABLE: no registration with a daemon that may run here.
# LD_LIBRARY_PATH at the link too: ld looks for libstapsdt's own
# libusdtkit-runtime.so.0 there and in the system's directories, not in -L's.)
for prog in rt:usdtkit-runtime st:libstapsdt; do
	# shellcheck disable=SC2046
	LD_LIBRARY_PATH="$P/$L" gcc -Wall -Werror -o "$T/${prog%%:*}" "$T/${prog%%:*}.c" \
		$(pkg-config --cflags --libs "${prog#*:}") ||
		fail "building against the installed ${prog#*:}"
done
expect_eq "$(USDTKIT_DISABLE=1 LD_LIBRARY_PATH="$P/$L" "$T/rt")" "load 0, hit has 2 arguments" \
	"a program on the installed libusdtkit-runtime"
expect_eq "$(USDTKIT_DISABLE=1 LD_LIBRARY_PATH="$P/$L" "$T/st")" "load 0" "a program on the installed libstapsdt"
USDTKIT_DISABLE=1 LD_LIBRARY_PATH="$P/$L" ldd "$T/st" | grep -q "libusdtkit-runtime.so.0 => $P/$L/" ||
	fail "libstapsdt does not load the installed libusdtkit-runtime"
USDTKIT_DISABLE=1 LD_LIBRARY_PATH="$P/$L" PYTHONPATH="$P/$PY" python3 -c '
import usdtkit
p = usdtkit.Provider("tinstallpy")
p.add_probe("hit", "int")
p.load()
print(p.loaded, usdtkit.__file__)
p.destroy()' >"$T/py.out" 2>&1 || { cat "$T/py.out" >&2; fail "the installed Python package"; }
expect_eq "$(cat "$T/py.out")" "True $P/$PY/usdtkit/__init__.py" "the installed Python package loads a provider"

# --- 2. DESTDIR ---
D="$T/dest"
DESTDIR="$D" meson install -C "$B" --no-rebuild >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; fail "meson install with DESTDIR"; }
expect_eq "$(installed "$D")" "$(expected_files "$D$P" dtrace | sort)" "files under DESTDIR"

# --- 3. the command under another name (beside systemtap-sdt-dev's dtrace) ---
meson configure "$B" -Ddtrace_name=usdtkit-dtrace >"$T/conf.log" 2>&1 ||
	{ cat "$T/conf.log" >&2; fail "meson configure -Ddtrace_name"; }
install_targets usdtkit-dtrace
D2="$T/dest2"
DESTDIR="$D2" meson install -C "$B" --no-rebuild >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; fail "meson install -Ddtrace_name=usdtkit-dtrace"; }
expect_eq "$(installed "$D2")" "$(expected_files "$D2$P" usdtkit-dtrace | sort)" \
	"files with dtrace_name=usdtkit-dtrace"
expect_eq "$(PKG_CONFIG_PATH="$D2$P/share/pkgconfig" pkg-config --variable=dtrace usdtkit)" \
	"$P/bin/usdtkit-dtrace" "usdtkit.pc dtrace variable with dtrace_name"
expect_grep '^\.TH USDTKIT-DTRACE 1 ' "$D2$P/share/man/man1/usdtkit-dtrace.1" "man page title"
expect_grep '^usdtkit-dtrace \\- ' "$D2$P/share/man/man1/usdtkit-dtrace.1" "man page NAME"

# --- 4. the stand-alone projects against the installed usdtkit ---
export USDTKIT="$USDTKIT_SRCDIR" CMAKE_PREFIX_PATH="$P" ACLOCAL_PATH="$P/share/aclocal"
unset DTRACE SDT_CFLAGS
# The examples must not find sdt.h in this tree: check they use the prefix's.
# With clang: t-buildsys.sh builds the same three projects with the system's
# cc (gcc) against its own prefix, so each compiler builds each project once
# (both here doubled this test's time for builds the suite already has).
for cc in clang; do
	PATH="$(compiler_shims "$cc"):$PATH"
	for proj in meson-project cmake-project autotools-project; do
		d="$T/$cc-$proj"
		mkdir -p "$d" && cd "$d"
		run_readme_block "$EXAMPLES/$proj/README.md" "build $proj"
		prog="$d/build/greeter"
		[ "$proj" = autotools-project ] && prog="$d/greeter"
		# The README block ran it with three names.
		expect_eq "$(cat "$T/block.out" | grep '^hello, ' | tr '\n' ' ')" \
			"hello, ann hello, bob hello, carol " "$cc $proj: output"
		if [ "$proj" = meson-project ]; then
			grep -q -- "-I$P/include" build/compile_commands.json ||
				fail "$cc $proj: not compiled with the prefix's include directory"
			grep -q "$P/bin/dtrace" build/build.ninja ||
				fail "$cc $proj: the installed dtrace is not the one used"
		elif [ "$proj" = autotools-project ]; then
			expect_grep "^DTRACE = $P/bin/dtrace\$" Makefile "$cc $proj: the installed dtrace"
			expect_grep "^USDTKIT_CFLAGS = -I$P/include" Makefile "$cc $proj: the prefix's include directory"
		else
			grep -rq -- "$P/include" build/CMakeFiles/greeter.dir/flags.make ||
				fail "$cc $proj: not compiled with the prefix's include directory"
			grep -rqF "$P/bin/dtrace" build/CMakeFiles/greeter.dir/build.make build/CMakeFiles/*.dir/build.make ||
				fail "$cc $proj: the installed dtrace is not the one used"
		fi
		readelf -n "$prog" | awk '/Provider:/ { p = $2 } /Name:/ { n = $2 }
			/Arguments:/ { $1 = ""; print p, n, NF - 1 }' | sort >notes
		expect_eq "$(cat notes | tr '\n' ' ')" "greeter done 2 greeter greet 2 " "$cc $proj: notes"
		readelf -S "$prog" | grep -q '\.note\.usdtkit' ||
			fail "$cc $proj: no -G metadata note (the provider object was not linked)"
		gdb_probe greeter:greet 'zed yo' "$prog" '(char *)$_probe_arg0' '$_probe_arg1' >gdb.out
		expect_grep '^argc=2$' gdb.out "$cc $proj: gdb argc"
		expect_grep '"zed"$' gdb.out "$cc $proj: gdb name"
		expect_grep '^1$' gdb.out "$cc $proj: gdb index"
		bpftrace -c "$prog alpha be c" -e "
usdt:$prog:greeter:greet { printf(\"greet %d %s\n\", arg1, str(arg0)); }
usdt:$prog:greeter:done { printf(\"done %d %d\n\", arg0, arg1); }" >bt.out 2>&1 ||
			{ cat bt.out >&2; fail "$cc $proj: bpftrace"; }
		expect_grep '^greet 1 alpha$' bt.out "$cc $proj: bpftrace greet 1"
		expect_grep '^greet 2 be$' bt.out "$cc $proj: bpftrace greet 2"
		expect_grep '^greet 3 c$' bt.out "$cc $proj: bpftrace greet 3"
		expect_grep '^done 3 8$' bt.out "$cc $proj: bpftrace done (3 names, 5+2+1 bytes)"
		cd "$T"
	done
done
echo "installed layout, DESTDIR, dtrace_name, and the meson and CMake projects against the prefix"
