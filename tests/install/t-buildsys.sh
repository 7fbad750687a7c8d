#!/bin/bash
# Build-system integration from an installed usdtkit built with
# -Dhelper=disabled (what a build machine has; t-install.sh does the same
# examples against a full install):
#  1. the installed files: share/cmake/usdtkit/, share/aclocal/usdtkit.m4,
#     share/usdtkit/usdtkit.mk and its awk script;
#  2. examples/cmake-project, autotools-project and meson-project built with
#     the commands of their READMEs against the prefix only, run, and traced
#     with bpftrace (the autotools one: a libtool library's probe too); their
#     headers check argument types (dtrace -h -x typecheck), unlike a plain
#     `dtrace -h`'s;
#  3. tests/install/cmake-matrix with the Ninja and the Makefile generators,
#     out of tree, -j2: an executable with two providers, a shared library
#     sharing one .d with it, a static library whose provider object the
#     program gets from the archive alone; every probe traced in the program;
#     a touched .d makes -G run again;
#  4. -DUSDTKIT_ENABLE=OFF with no dtrace at all: builds with -Werror
#     -pedantic, runs the same, no probe and no metadata anywhere;
#  5. the Autotools project without --enable-dtrace: the same.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
need_bpftrace
for tool in meson ninja cmake make pkg-config autoreconf automake libtoolize; do
	command -v $tool >/dev/null || fail "$tool is not installed (scripts/deps.sh installs it)"
done

P="$T/prefix"
B="$T/build"
meson setup "$B" "$USDTKIT_SRCDIR" --prefix="$P" -Dhelper=disabled -Dlibdwarf=disabled >"$T/setup.log" 2>&1 ||
	{ cat "$T/setup.log" >&2; fail "meson setup -Dhelper=disabled"; }
ninja -C "$B" dtrace/dtrace runtime/libusdtkit-runtime.so.0.1.0 runtime/stapsdt/libstapsdt.so.0.1.1 \
	>"$T/ninja.log" 2>&1 || { cat "$T/ninja.log" >&2; fail "building the installed targets"; }
meson install -C "$B" --no-rebuild >"$T/install.log" 2>&1 || { cat "$T/install.log" >&2; fail "meson install"; }

# --- 1. the installed files ---
for f in share/cmake/usdtkit/usdtkitConfig.cmake share/cmake/usdtkit/usdtkitConfigVersion.cmake \
	share/cmake/usdtkit/usdtkit-null-header.cmake share/aclocal/usdtkit.m4 share/usdtkit/usdtkit.mk \
	share/usdtkit/usdtkit-null-header.awk; do
	[ -f "$P/$f" ] || fail "$f is not installed"
done
expect_grep "^AC_SUBST\(\[USDTKIT_MK\], \['$P/share/usdtkit/usdtkit.mk'\]\)" "$P/share/aclocal/usdtkit.m4" \
	"usdtkit.m4 names the installed fragment"

export USDTKIT="$USDTKIT_SRCDIR" CMAKE_PREFIX_PATH="$P" ACLOCAL_PATH="$P/share/aclocal" \
	PKG_CONFIG_PATH="$P/share/pkgconfig"
unset DTRACE SDT_CFLAGS
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"

# --- 2. the examples ---
for proj in cmake-project autotools-project meson-project; do
	d="$T/$proj"
	mkdir -p "$d" && cd "$d"
	run_readme_block "$EXAMPLES/$proj/README.md" "build $proj"
	expect_eq "$(grep '^hello, ' "$T/block.out" | tr '\n' ' ')" "hello, ann hello, bob hello, carol " "$proj: output"
	prog=$(find "$d" -name greeter -type f -perm -u+x ! -path '*/.libs/*' | head -1)
	[ -n "$prog" ] || fail "$proj: no greeter program"
	readelf -S "$prog" | grep -q '\.note\.usdtkit' || fail "$proj: no provider object linked into greeter"
	# A build that chose usdtkit gets the type checks (dtrace -h -x typecheck):
	# the integration's header reports an int passed for the name.
	hdr=$(find "$d" -name greeter_probes.h -type f | head -1)
	[ -n "$hdr" ] || fail "$proj: no greeter_probes.h"
	printf '#include "%s"\nvoid f(int i);\nvoid f(int i) { GREETER_GREET(i, i); }\n' "$hdr" >"$T/tc.c"
	cc -Wall -I"$P/include" -c "$T/tc.c" -o "$T/tc.o" 2>"$T/tc.err" ||
		{ cat "$T/tc.err" >&2; fail "$proj: a mismatched argument is an error"; }
	expect_grep "greeter:greet argument 1 does not match the declared type 'char \*'" "$T/tc.err" \
		"$proj: the integration's header checks argument types"
	cc -Wall -Werror -DUSDTKIT_NO_TYPE_CHECKS -I"$P/include" -c "$T/tc.c" -o "$T/tc.o" ||
		fail "$proj: USDTKIT_NO_TYPE_CHECKS does not turn the integration's checks off"
	script="usdt:$prog:greeter:greet { printf(\"greet %d %s\n\", arg1, str(arg0)); }
usdt:$prog:greeter:done { printf(\"done %d %d\n\", arg0, arg1); }"
	lib=""
	if [ "$proj" != cmake-project ]; then
		lib=$d/build/libcounter.so
		[ "$proj" = autotools-project ] && lib=$d/.libs/libcounter.so
		lib=$(readlink -f "$lib")
		readelf -S "$lib" | grep -q '\.note\.usdtkit' || fail "$proj: no provider object in libcounter.so"
		script="$script
usdt:$lib:counter:add { printf(\"add %d %d\n\", arg0, arg1); }"
	fi
	# (in the background: bpftrace -c cannot attach to a library the
	# program has not loaded yet; this attaches to the files)
	bt_start bt.out "$script"
	"$prog" alpha be c >/dev/null
	if [ -n "$lib" ]; then bt_stop '^(greet|done|add) ' 7; else bt_stop '^(greet|done) ' 4; fi
	for l in 'greet 1 alpha' 'greet 2 be' 'greet 3 c' 'done 3 8'; do
		expect_grep "^$l\$" bt.out "$proj: bpftrace '$l'"
	done
	if [ -n "$lib" ]; then
		expect_eq "$(grep '^add ' bt.out | tr '\n' ' ')" "add 5 5 add 2 7 add 1 8 " "$proj: the library's probe"
	fi
	cd "$T"
done
echo "ok: the three examples from the installed layout, traced"

# --- 3. the CMake matrix ---
# (a copy: the test touches a .d; the builds are out of its tree)
M="$T/cmake-matrix"
cp -r "$USDTKIT_SRCDIR/tests/install/cmake-matrix" "$M"
for gen in Ninja "Unix Makefiles"; do
	d="$T/matrix-${gen// /-}"
	cmake -G "$gen" -S "$M" -B "$d" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$d.cmake" 2>&1 ||
		{ cat "$d.cmake" >&2; fail "$gen: cmake"; }
	cmake --build "$d" -j2 >"$d.build" 2>&1 || { cat "$d.build" >&2; fail "$gen: build"; }
	expect_eq "$("$d/app" 3)" "sum 3006" "$gen: app's output"
	# Three metadata notes in app (bsalpha, bsgamma, and bsbeta from the archive), one in the library.
	expect_eq "$(readelf -n "$d/app" | grep -c '^  usdtkit ')" 3 "$gen: metadata notes in app"
	expect_eq "$(readelf -n "$d/lib/libbsshared.so" | grep -c '^  usdtkit ')" 1 "$gen: metadata notes in libbsshared.so"
	nm "$d/app" | grep -q 'bsbeta_sum_semaphore' || fail "$gen: the static library's provider object is not in app"
	bt_start "$d/bt.out" "
usdt:$d/app:bsalpha:hit { printf(\"app-hit %d %s\n\", arg0, str(arg1)); }
usdt:$d/lib/libbsshared.so:bsalpha:hit { printf(\"lib-hit %d %s\n\", arg0, str(arg1)); }
usdt:$d/app:bsgamma:tick__tock { printf(\"tick %d\n\", arg0); }
usdt:$d/app:bsbeta:sum { printf(\"sum %d\n\", arg0); }
usdt:$d/app:bsbeta:idle { printf(\"idle\n\"); }"
	"$d/app" 2 >/dev/null
	bt_stop '^(app-hit|lib-hit|tick|sum|idle)' 10
	for l in 'app-hit 1 app' 'lib-hit 2 shared' 'tick 0' 'tick 1' 'sum 1000' 'sum 1002' 'idle'; do
		expect_grep "^$l\$" "$d/bt.out" "$gen: bpftrace '$l'"
	done
	# A changed .d: its header and app's -G again.
	sleep 1
	touch "$M/bsgamma.d"
	cmake --build "$d" -v >"$d.rebuild" 2>&1 || { cat "$d.rebuild" >&2; fail "$gen: rebuild"; }
	expect_grep "dtrace.* -h -s $M/bsgamma\\.d" "$d.rebuild" "$gen: the header again after the .d changed"
	expect_grep "dtrace.* -G -s $M/bsgamma\\.d" "$d.rebuild" "$gen: -G again after the .d changed"
done
echo "ok: the CMake matrix with Ninja and Makefiles"

# --- 4. -DUSDTKIT_ENABLE=OFF, no dtrace needed ---
d="$T/matrix-off"
cmake -G Ninja -S "$M" -B "$d" -DUSDTKIT_ENABLE=OFF -DUSDTKIT_DTRACE_EXECUTABLE=/nonexistent/dtrace \
	-DCMAKE_C_FLAGS="-Wall -Wextra -Werror -pedantic" >"$d.cmake" 2>&1 || { cat "$d.cmake" >&2; fail "OFF: cmake"; }
cmake --build "$d" >"$d.build" 2>&1 || { cat "$d.build" >&2; fail "OFF: build"; }
expect_eq "$("$d/app" 3)" "sum 3006" "OFF: app's output"
if readelf -SW "$d/app" "$d/lib/libbsshared.so" | grep -E ' \.(note\.stapsdt|note\.usdtkit|probes) ' >&2; then
	fail "OFF: probes or metadata in the programs"
fi

# --- 5. Autotools without --enable-dtrace ---
d="$T/at-off"
mkdir -p "$d" && cd "$d"
cp -r "$EXAMPLES/autotools-project/." .
{ autoreconf -fi && ./configure CFLAGS="-O2 -Wall -Wextra -Werror" && make; } >build.log 2>&1 ||
	{ cat build.log >&2; fail "autotools without --enable-dtrace"; }
expect_eq "$(./greeter ann | tr '\n' ' ')" "hello, ann " "autotools, dtrace disabled: output"
if readelf -SW greeter .libs/libcounter.so | grep -E ' \.(note\.stapsdt|note\.usdtkit|probes) ' >&2; then
	fail "autotools, dtrace disabled: probes in the programs"
fi
echo "ok: probes off (USDTKIT_ENABLE=OFF, no --enable-dtrace): same programs, no probes"
