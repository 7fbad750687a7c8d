#!/bin/bash
# The Erlang/OTP pattern (erlangstyle/Makefile): `dtrace -h -C` on a
# provider that #includes a header, the result run through
# sed '/^#define[ ]*ERLANG_[A-Z0-9_]*(.*)/y/ABC...Z/abc...z/', which
# lower-cases each probe's #define line (name and parameters), and the code
# calls erlang_process_spawn(...) and erlang_process_spawn_enabled()
# through a wrapper header; `dtrace -G -C` over the objects. Built -Werror;
# then the probes checked in gdb and bpftrace, all of them _ENABLED()-guarded
# (so they fire only through the -G object's semaphores).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/dropin/lib.sh"

declared=$(sed -n 's/^[[:space:]]*probe \([a-z_]*\)(.*/erlang:\1/p' \
	"$USDTKIT_SRCDIR/tests/dropin/erlangstyle/beam/erlang_dtrace.d" | sort -u)
[ "$(echo "$declared" | wc -l)" -eq 4 ] || fail "erlang_dtrace.d: expected 4 probes"

for cc in $COMPILERS; do
	copy_project erlangstyle "$cc"
	make DTRACE="$DTRACE" CC="$cc" SDT_CFLAGS="$SDT_CFLAGS" CFLAGS="-O2 -g -Wall -Wextra -Werror" \
		>make.log 2>&1 || { cat make.log >&2; fail "$cc: make"; }
	h=obj/dtrace-probes.h
	expect_no_grep '^#define[ ]*ERLANG_[A-Z0-9_]*\(' "$h" "$cc: an upper-case probe #define left"
	for p in process_spawn message_send process_exit gc_major_start; do
		expect_grep "^#define erlang_${p}\\(arg1[^)]*\\) \\\\\$" "$h" "$cc: lower-cased $p"
		expect_grep "^#define erlang_${p}_enabled\\(\\) \\\\\$" "$h" "$cc: lower-cased ${p}_enabled"
	done
	expect_eq "$(gdb_probes beam.smp)" "$declared" "$cc: gdb info probes vs erlang_dtrace.d"

	# One spawn loop (n = 2): pids 80 (init), 81, 82; the last exits.
	gdb_probe erlang:process__exit 2 ./beam.smp '(char *)$_probe_arg0' '(char *)$_probe_arg1' >gdb.out
	tr '\n' ' ' <gdb.out | grep -qE 'argc=2 0x[0-9a-f]+ "<0\.82\.0>" 0x[0-9a-f]+ "normal" ' ||
		{ cat gdb.out >&2; fail "$cc: gdb process__exit arguments"; }

	n=3
	bt_run bt.out "./beam.smp $n" '
usdt:./beam.smp:erlang:process__spawn { printf("spawn %s %s\n", str(arg0), str(arg1)); }
usdt:./beam.smp:erlang:message__send { printf("send %s %s %d %d\n", str(arg0), str(arg1), arg2, arg3); }
usdt:./beam.smp:erlang:gc_major__start { printf("gc %s %d %d\n", str(arg0), arg1, arg2); }
usdt:./beam.smp:erlang:process__exit { printf("exit %s %s\n", str(arg0), str(arg1)); }'
	# What erl_main.c and erl_process.c pass, computed here.
	{
		for ((pid = 80; pid <= 80 + n; pid++)); do
			mfa=$([ $pid -eq 80 ] && echo init:boot/1 || echo worker:loop/2)
			echo "spawn <0.$pid.0> $mfa"
			echo "gc <0.$pid.0> $((pid * 2)) $((233 * pid))"
			[ $pid -gt 80 ] && echo "send <0.$((pid - 1)).0> <0.$pid.0> $((10 * (pid - 80))) -1"
		done
		echo "exit <0.$((80 + n)).0> normal"
	} >expect
	grep -E '^(spawn|gc|send|exit) ' bt.out >got || true
	expect_eq "$(cat got)" "$(cat expect)" "$cc: bpftrace firings"
done
echo "Erlang pattern: lower-cased probe macros, -C -h/-G: probes right in gdb and bpftrace"
