#!/bin/bash
# The GLib pattern (glibstyle/build.sh): a shared library whose probes
# header comes from `dtrace -h` with `#define _SDT_HAS_SEMAPHORES 1` and
# `#define STAP_HAS_SEMAPHORES 1` rewritten by sed to #undef, probes wrapped
# in a TRACE() macro, and no `dtrace -G` object linked anywhere. The header
# must compile (-Werror) and link without any semaphore, every note must say
# "no semaphore", _ENABLED() must be constantly true, and the probes must
# fire in bpftrace with the right values and show in gdb.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/dropin/lib.sh"

declared=$(sed -n 's/^[[:space:]]*probe \([a-z_]*\)(.*/glib:\1/p' \
	"$USDTKIT_SRCDIR/tests/dropin/glibstyle/glib/glib_probes.d" | sort -u)
ndeclared=$(echo "$declared" | wc -l)

for cc in $COMPILERS; do
	copy_project glibstyle "$cc"
	DTRACE="$DTRACE" CC="$cc" SDT_CFLAGS="$SDT_CFLAGS" CFLAGS="-O2 -g -Wall -Wextra -Werror" \
		sh build.sh >build.log 2>&1 || { cat build.log >&2; fail "$cc: build.sh"; }
	expect_no_grep ' -G ' build.log "$cc: the build ran dtrace -G"
	h=glib/glib_probes.h
	expect_grep '^#undef _SDT_HAS_SEMAPHORES$' "$h" "$cc: the sed rewrote _SDT_HAS_SEMAPHORES"
	expect_grep '^#undef STAP_HAS_SEMAPHORES' "$h" "$cc: the sed rewrote STAP_HAS_SEMAPHORES"
	expect_no_grep '^#define (_SDT|STAP)_HAS_SEMAPHORES' "$h" "$cc: a semaphore line left"

	lib=glib/libminiglib.so
	nm -D --undefined-only "$lib" >undef
	expect_no_grep 'semaphore' undef "$cc: the library references a semaphore"
	readelf -S "$lib" | grep -q ' \.probes ' && fail "$cc: a .probes section without -G"
	readelf -n "$lib" >notes
	expect_eq "$(grep -c 'Semaphore: 0x0*$' notes)" "$ndeclared" "$cc: every note without semaphore"
	expect_eq "$(grep -c 'Semaphore:' notes)" "$ndeclared" "$cc: one site per probe"
	expect_eq "$(gdb_probes "$lib")" "$declared" "$cc: gdb info probes vs glib_probes.d"

	./testglib >out
	expect_eq "$(cat out)" "enabled=1" "$cc: _ENABLED() without semaphores"

	gdb_probe glib:quark__new 'hello' ./testglib '(char *)$_probe_arg0' '$_probe_arg1' >gdb.out
	tr '\n' ' ' <gdb.out | grep -qE 'argc=2 0x[0-9a-f]+ "hello" 1 ' ||
		{ cat gdb.out >&2; fail "$cc: gdb quark__new arguments"; }

	bt_start bt.out "
usdt:$T/$cc/$lib:glib:quark__new { printf(\"quark %s %d\n\", str(arg0), arg1); }
usdt:$T/$cc/$lib:glib:mem__alloc { printf(\"alloc %d\n\", arg1); }
usdt:$T/$cc/$lib:glib:mem__free { printf(\"free\n\"); }
usdt:$T/$cc/$lib:glib:main__dispatch { printf(\"dispatch %s %d\n\", str(arg0), arg2); }"
	./testglib a bb a ccc >/dev/null
	bt_stop '^quark' 3 '^alloc' 4 '^free$' 4 '^dispatch' 4
	# quark__new only for new strings; allocations of 16 * quark; dispatch
	# returns the string's length (testglib.c).
	expect_eq "$(grep '^quark' bt.out | tr '\n' ' ')" "quark a 1 quark bb 2 quark ccc 3 " "$cc: quark__new"
	expect_eq "$(grep '^alloc' bt.out | tr '\n' ' ')" "alloc 16 alloc 32 alloc 16 alloc 48 " "$cc: mem__alloc"
	expect_eq "$(grep -c '^free$' bt.out)" 4 "$cc: mem__free"
	expect_eq "$(grep '^dispatch' bt.out | tr '\n' ' ')" \
		"dispatch a 1 dispatch bb 2 dispatch a 1 dispatch ccc 3 " "$cc: main__dispatch"
done
echo "GLib pattern: semaphore lines turned into #undef, no -G: probes right in gdb and bpftrace"
