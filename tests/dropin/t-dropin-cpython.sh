#!/bin/bash
# The CPython pattern (cpythonstyle/configure and Makefile): configure asks
# whether probes need linking by running `dtrace -G` on a .d holding only
# `BEGIN{}` (no provider): that must exit 0 and leave an object, so the
# build goes on with Python/pydtrace.o. Then the real provider: `dtrace -h`,
# the non-global sed s/PYTHON_/PyDTrace_/ (one rename per line must be
# enough), `dtrace -G` over the objects with probes. The probes, all
# _ENABLED()-guarded, are checked in gdb and bpftrace; the same tree built
# without --with-dtrace has none.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/dropin/lib.sh"

# The configure test by itself: exit status 0 and a relocatable object.
cd "$T"
echo 'BEGIN{}' >conftest.d
"$DTRACE" -G -o conftest.o -s conftest.d || fail "-G on BEGIN{} exited $?"
readelf -h conftest.o | grep -qE 'Type: +REL ' || fail "-G on BEGIN{}: conftest.o is not a relocatable object"

# Declared in pydtrace.d; instance__new__start and import__find__load__start
# have no site in this tree's sources (as in a CPython build without them).
declared=$(sed -n 's/^[[:space:]]*probe \([a-z_]*\)(.*/python:\1/p' \
	"$USDTKIT_SRCDIR/tests/dropin/cpythonstyle/Include/pydtrace.d" | sort -u)
used=$(echo "$declared" | grep -vE ':(instance__new__start|import__find__load__start)$')
[ "$(echo "$used" | wc -l)" -eq 6 ] || fail "pydtrace.d: expected 8 probes, 6 used"

for cc in $COMPILERS; do
	copy_project cpythonstyle "$cc"
	DTRACE="$DTRACE" ./configure --with-dtrace >configure.log 2>&1 ||
		{ cat configure.log >&2; fail "$cc: configure"; }
	expect_grep '^checking whether DTrace probes require linking\.\.\. yes$' configure.log \
		"$cc: configure's -G test on BEGIN{}"
	make CC="$cc" SDT_CFLAGS="$SDT_CFLAGS" CFLAGS="-O2 -g -Wall -Wextra -Werror" >make.log 2>&1 ||
		{ cat make.log >&2; fail "$cc: make"; }
	# Nothing from dtrace in the build log (SystemTap's prints nothing
	# either): the two probes without a site are not reported by default.
	expect_no_grep 'pydtrace\.d:[0-9]+|^dtrace: |(warning|error): ' make.log "$cc: dtrace's output in the build log"
	# ... and named when asked for (the same -G command, Makefile line 26).
	USDTKIT_WARN_UNUSED=1 "$DTRACE" -o unused.o -G -s Include/pydtrace.d Python/ceval.o Python/gc.o \
		2>unused.err || { cat unused.err >&2; fail "$cc: -G with USDTKIT_WARN_UNUSED=1"; }
	expect_eq "$(sed -n "s/.*warning: probe '\([a-z_:]*\)' is declared but has no site.*/\1/p" unused.err | sort | tr '\n' ' ')" \
		"python:import__find__load__start python:instance__new__start " "$cc: the unused probes, when asked for"
	h=Include/pydtrace_probes.h
	expect_no_grep 'PYTHON_' "$h" "$cc: a PYTHON_ the non-global sed left"
	expect_grep '^#define PyDTrace_FUNCTION_ENTRY\(arg1, arg2, arg3\) \\$' "$h" "$cc: renamed macro"
	expect_grep '^#define PyDTrace_FUNCTION_ENTRY_ENABLED\(\) \\$' "$h" "$cc: renamed _ENABLED()"
	[ -f Python/pydtrace.o ] || fail "$cc: no Python/pydtrace.o"
	expect_eq "$(gdb_probes python)" "$used" "$cc: gdb info probes"
	expect_eq "$(./python 1)" ok "$cc: runs"

	gdb_probe python:line 1 ./python '(char *)$_probe_arg0' '(char *)$_probe_arg1' '$_probe_arg2' >gdb.out
	tr '\n' ' ' <gdb.out | grep -qE 'argc=3 0x[0-9a-f]+ "spam\.py" 0x[0-9a-f]+ "eggs" 10 ' ||
		{ cat gdb.out >&2; fail "$cc: gdb line arguments"; }

	bt_run bt.out './python 2' '
usdt:./python:python:function__entry { printf("entry %s %s %d\n", str(arg0), str(arg1), arg2); }
usdt:./python:python:line { printf("line %s %d\n", str(arg1), arg2); }
usdt:./python:python:function__return { printf("return %s %d\n", str(arg1), arg2); }
usdt:./python:python:gc__start { printf("gc-start %d\n", arg0); }
usdt:./python:python:gc__done { printf("gc-done %d\n", arg0); }
usdt:./python:python:audit { printf("audit %s\n", str(arg0)); }'
	# What Programs/python.c runs: i = 0, 1: eggs at line 10(i+1), 3 lines;
	# gc of generation i % 3 over 1000 + i objects collects (1000 + i) / (gen + 1).
	{
		for i in 0 1; do
			f=$((10 * (i + 1)))
			echo "entry spam.py eggs $f"
			for ((l = f; l < f + 3; l++)); do echo "line eggs $l"; done
			echo "return eggs $((f + 2))"
			echo "gc-start $((i % 3))"
			echo "gc-done $(((1000 + i) / (i % 3 + 1)))"
			echo "audit gc.collect"
		done
	} >expect
	grep -E '^(entry|line|return|gc-start|gc-done|audit) ' bt.out >got || true
	expect_eq "$(cat got)" "$(cat expect)" "$cc: bpftrace firings"

	# Without dtrace: the same sources, no probes at all.
	make clean >/dev/null
	./configure >configure.log 2>&1 || { cat configure.log >&2; fail "$cc: configure without dtrace"; }
	make CC="$cc" CFLAGS="-O2 -Wall -Wextra -Werror" >make.log 2>&1 ||
		{ cat make.log >&2; fail "$cc: make without dtrace"; }
	readelf -n python | grep -q stapsdt && fail "$cc: probes in a build without dtrace"
done
echo "CPython pattern: -G on BEGIN{} gives an object, sed rename, -G over the objects: probes right"
