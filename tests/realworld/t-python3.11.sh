#!/bin/bash
# CPython 3.11 (python3.11) from Debian's source package, built by its own
# autotools (./configure --with-dtrace: configure's -G test on a .d holding
# only BEGIN{}, `dtrace -h` on Include/pydtrace.d and the sed renaming the
# macros PyDTrace_*, then `dtrace -G` over the four objects with probes,
# linked into the interpreter) with SystemTap's tools and with usdtkit's,
# out of the source tree, at Debian's flags (dpkg-buildflags) with CPython's
# own warning flags: the `python` interpreter alone (Debian's package also
# builds the shared library, the extension modules, PGO and LTO, none with a
# probe of its own). Then compared: both build, no more warnings with
# usdtkit (those mentioning sdt.h or the generated header, and every
# compiler warning of the log), the same notes per provider, the same exact
# values traced by bpftrace from a script with known functions, lines, an
# import and a collection; and the -h and -G times.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/realworld/lib.sh"

rw_project python3.11
rw_need_pkgs make gcc pkg-config dpkg-dev
rw_fetch python3.11

build_python() { # DIR
	"$RW_SRC/configure" --with-dtrace --without-ensurepip \
		CFLAGS="$(dpkg-buildflags --get CFLAGS)" CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS) $RW_INC" \
		LDFLAGS="$(dpkg-buildflags --get LDFLAGS)" &&
		make -j2 python
}
for t in $TOOLS; do rw_build "$t" build_python; done
rw_check_builds
# Which dtrace ran (configure finds it on PATH and writes its path into the
# Makefile), whether configure decided -G is needed (its test on BEGIN{}),
# and which <sys/sdt.h>: the build writes no dependency files, so
# ceval.o's compile command from the log is run again with -M.
sdt_of() { # TOOL
	local cmd
	cmd=$(grep -m1 -- ' -o Python/ceval\.o ' "$PW/$1.log")
	(cd "$PW/$1" && bash -c "${cmd/ -o Python\/ceval.o/} -M") | tr ' ' '\n' | grep '/sys/sdt\.h$' | sort -u
}
for t in $TOOLS; do
	rw_tool_env "$t"
	grep -q '^checking whether DTrace probes require linking\.\.\. yes$' "$PW/$t.log" ||
		rw_fail "$t: configure's -G test on BEGIN{} did not say yes"
	grep -q "^$RW_DTRACE .*-G " "$PW/$t.log" || rw_fail "$t: the build did not run $RW_DTRACE -G"
	eval "sdt_$t=\$(sdt_of $t)"
done
# shellcheck disable=SC2154
rw_uses "$sdt_systemtap" "$sdt_usdtkit"
rw_check_warnings pydtrace_probes.h pydtrace.h
# shellcheck disable=SC2154
[ "$all_usdtkit" = "$all_systemtap" ] ||
	rw_fail "compiler warnings in the whole log: $all_usdtkit with usdtkit, $all_systemtap with SystemTap"
rw_check_notes python

# -h and -G as the Makefile runs them, each writing a scratch file; -G on
# copies of the objects (usdtkit's may rewrite the sites of objects it is
# given).
time_tools() {
	local t objs hms gms
	for t in $TOOLS; do
		rw_tool_env "$t"
		objs=$(sed -n 's|^.* -o Python/pydtrace\.o -G -s [^ ]*Include/pydtrace\.d \(.*\)$|\1|p' "$PW/$t.log")
		[ -n "$objs" ] || { rw_fail "$t: no -G command in the build log"; continue; }
		rm -rf "$T/time-$t" && mkdir -p "$T/time-$t"
		cp "$RW_SRC/Include/pydtrace.d" "$T/time-$t/"
		# shellcheck disable=SC2086
		(cd "$PW/$t" && cp --parents $objs "$T/time-$t/")
		cd "$T/time-$t"
		hms=$(rw_median_ms 7 "$RW_DTRACE" -o scratch.h -h -s pydtrace.d)
		# shellcheck disable=SC2086
		gms=$(rw_median_ms 7 "$RW_DTRACE" -o scratch.o -G -s pydtrace.d $objs)
		eval "h_$t=\$hms g_$t=\$gms"
		cd "$T"
		rm -rf "$T/time-$t"
	done
	# shellcheck disable=SC2154
	rw_row "dtrace -h (median of 7)" "$h_systemtap" "$h_usdtkit"
	# shellcheck disable=SC2154
	rw_row "dtrace -G over $(echo "$objs" | wc -w) objects (median of 7)" "$g_systemtap" "$g_usdtkit"
}
time_tools

# The workload: a script run by the built interpreter (from its build
# directory, the standard library from the source tree; -S -E: no site, no
# environment), known functions at known lines, an import, a collection of
# generation 1. It exits 3 if Python got a value wrong.
cat >"$T/rw.py" <<'PY'
import gc
def rw_add(a, b):
    return a + b
def rw_twice(n):
    return rw_add(n, n)
total = rw_twice(20) + rw_add(1, 1)
import colorsys
gc.collect(1)
if total != 42:
    raise SystemExit(3)
PY
workload() { # TOOL
	(cd "$PW/$1" && timeout 20 ./python -S -E "$T/rw.py") >"$PW/$1.py.out" 2>&1 &&
		[ ! -s "$PW/$1.py.out" ] || { cat "$PW/$1.py.out" >&2; return 1; }
}
# What each probe must show, in order: each line run with its file,
# function and number (a call's line is not reported again when the call
# returns), each function's return with the line it returns from, the
# module imported and its result, the collection's generation, and the
# audit event of the script's start. function__entry is not traced: CPython
# 3.11 fires it for no function of the script, with either tool, as in
# Debian's own python3.11 (its call path inlines Python-to-Python calls
# past the probe; only functions entered from C, such as getpath's
# generator, fire it).
f=$T/rw.py
cat >"$T/expected" <<EOF
audit cpython.run_file
line $f <module> 1
line $f <module> 2
line $f <module> 4
line $f <module> 6
line $f rw_twice 5
line $f rw_add 3
return $f rw_add 3
return $f rw_twice 5
line $f rw_add 3
return $f rw_add 3
line $f <module> 7
import_start colorsys
import_done colorsys 1
line $f <module> 8
gc_start 1
gc_done (\d+)
line $f <module> 9
return $f <module> 9
EOF
BT_SCRIPT_FOR() { # BINARY
	local b=$1
	cat <<EOF
usdt:$b:python:audit /str(arg0) == "cpython.run_file"/ { printf("audit %s\n", str(arg0)); }
usdt:$b:python:line /str(arg0) == "$f"/ { printf("line %s %s %d\n", str(arg0), str(arg1), arg2); }
usdt:$b:python:function__return /str(arg0) == "$f"/ { printf("return %s %s %d\n", str(arg0), str(arg1), arg2); }
usdt:$b:python:import__find__load__start /str(arg0) == "colorsys"/ { printf("import_start %s\n", str(arg0)); }
usdt:$b:python:import__find__load__done /str(arg0) == "colorsys"/ { printf("import_done %s %d\n", str(arg0), arg1); }
usdt:$b:python:gc__start /arg0 == 1/ { @gc = 1; printf("gc_start %d\n", arg0); }
usdt:$b:python:gc__done /@gc/ { @gc = 0; printf("gc_done %d\n", arg0); }
END { clear(@gc); }
EOF
}
for t in $TOOLS; do
	rw_trace "$t" "$(BT_SCRIPT_FOR "$PW/$t/python")" workload "$T/expected"
done
# shellcheck disable=SC2154
rw_row "bpftrace: 7 probes, exact values (strings as strings)" "$bt_systemtap" "$bt_usdtkit"
rw_finish
