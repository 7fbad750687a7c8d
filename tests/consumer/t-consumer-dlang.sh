#!/bin/bash
# D as DTrace defines it, on the BPF engine (issue 35, item 4): run-time
# errors (a division or modulo by a run-time zero stops its clause, not the
# run: DTrace's message, the clause's record discarded, the ERROR probe fired
# with DTrace's arguments: arg1 the probe's ID, arg2 the clause's index, arg4
# DTRACEFLT_DIVZERO, arg5 0); macro variables ($pid, $ppid, $uid, $gid...);
# tick-/profile- units (ns, and none under 200 µs); exit() drains (no
# probe but END after it); printf's argument positions refused, %?, %.0s;
# options: aggsortkey/aggsortkeypos/aggsortrev honoured, output-changing
# ones not done refused, bad strsize/bufsize values refused. Expected values are
# DTrace's documented semantics.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
command -v clang >/dev/null || command -v clang-14 >/dev/null || fail "clang is not installed"

# A division by a run-time zero: the clause stops there (no "after"), its
# earlier output discarded with it ("before" never printed); the next clause
# of the probe runs; ERROR gets DTrace's arguments; the run goes on to exit.
dt 0 -x engine=bpf -q -n 'BEGIN { z = 0; printf("before\n"); x = 10 / z; printf("after\n"); }
BEGIN { printf("next %d\n", 7 % 4); }
ERROR { printf("ERROR %d %d %d %d\n", arg1, arg2, arg4 == DTRACEFLT_DIVZERO, arg5); }
ERROR { exit(0); }'
same "$T/out" "next 3\nERROR 1 0 1 0\n\n" "a division by zero stops its clause and fires ERROR"
same "$T/err" "dtrace: error in dt_clause_0 for probe ID 1 (dtrace:::BEGIN): divide-by-zero at BPF pc 1\n" \
	"the run-time error's message"

# Modulo, unsigned, in a predicate; without an ERROR clause: the message,
# and the run continues (tick keeps firing, exit in a later clause).
dt 0 -x engine=bpf -q -n 'BEGIN { z = 0; } tick-10ms /(n++ % (unsigned long)z) == 0/ { printf("no\n"); }
tick-10ms /n == 3/ { printf("n %d\n", n); exit(0); }'
same "$T/out" "n 3\n\n" "a modulo by zero in a predicate: the clause does not run, the run goes on"
[ "$(grep -c 'dtrace: error in dt_clause_1 for probe ID [0-9]* (profile:::tick-10ms): divide-by-zero at BPF pc 1$' "$T/err")" = 3 ] ||
	{ cat "$T/err" >&2; fail "one message per fault, each naming the tick probe"; }

# A fault in ERROR's own clause is reported, not fired again.
dt 0 -x engine=bpf -q -n 'BEGIN { z = 0; x = 1 / z; } ERROR { y = 2 / z; } ERROR { printf("once\n"); } BEGIN { exit(0); }'
same "$T/out" "once\n\n" "ERROR fires once for BEGIN's fault"
[ "$(grep -c 'divide-by-zero' "$T/err")" = 2 ] || { cat "$T/err" >&2; fail "two faults reported"; }

# copyinstr of an address that cannot be read: DTRACEFLT_BADADDR, the address.
dt 0 -x engine=bpf -q -n 'BEGIN { printf("a %s\n", copyinstr(8)); } BEGIN { printf("b\n"); }
ERROR { printf("E %d %d %d\n", arg4 == DTRACEFLT_BADADDR, arg5, arg2); exit(0); }'
same "$T/out" "b\nE 1 8 0\n\n" "copyinstr of a bad address stops its clause"
same "$T/err" "dtrace: error in dt_clause_0 for probe ID 1 (dtrace:::BEGIN): invalid address (0x8) at BPF pc 1\n" \
	"the bad address's message"

# A constant divisor that is not zero needs no test. Division truncates as
# C's; a signed modulo is DTrace's, not C's: 19 % -5 is -4 (Oracle's
# arithmetic/tst.moddiv.r: 19%-5 -4, -19%5 -4, -19%-5 4).
dt 0 -x engine=bpf -q -n 'BEGIN { printf("%d %d %d\n", -19 / 5, 19 % -5, 100 / (1 + 1)); exit(0); }'
same "$T/out" "-3 -4 50\n\n" "signed division and modulo"

# Timer units: ns and nsec (20 ms here), hz; tick's arg0/arg1 are the
# kernel's and the user's pc, one of them 0.
dt 0 -x engine=bpf -q -n 'tick-20000000ns { a++; } tick-20000000nsec /a >= 2/ { printf("ns %d\n", (arg0 == 0) != (arg1 == 0)); exit(0); }'
same "$T/out" "ns 1\n\n" "tick-Nns, tick-Nnsec; tick's arg0/arg1"
# Under DTrace's 200 microseconds, or no number: no such probe.
for d in tick-1ns profile-1us tick-199999nsec profile-5001hz tick-n; do
	dt 1 -x engine=bpf -q -n "$d { exit(0); }"
	grep -q "^<command line>:1:1: error: probe description $d does not match any probes" "$T/err" ||
		{ cat "$T/err" >&2; fail "$d matches nothing"; }
	# ...and under -xerrtags in DTrace's words, with DTrace's tag
	dt 1 -x engine=bpf -x errtags -q -n "$d { exit(0); }"
	grep -q "^dtrace: invalid probe specifier $d { exit(0); }: \\[D_PDESC_ZERO\\] .*does not match any probes" "$T/err" ||
		{ cat "$T/err" >&2; fail "$d matches nothing, -xerrtags"; }
done
dt 0 -x engine=bpf -q -n 'tick-200us { exit(0); }'

# After exit(), no probe but END runs a clause (DTrace's draining): a 1 ms
# tick that exits prints once, however many times it fires before the end.
dt 0 -x engine=bpf -q -n 'tick-1ms { printf("tick\n"); exit(0); } END { printf("end\n"); }'
same "$T/out" "tick\nend\n\n" "nothing runs after exit() but END"

# Macro variables of the dtrace process: $pid is dtrace's (the BEGIN
# probe runs in it) and $ppid its parent, $uid/$gid/$euid/$egid ours; $$pid
# its string.
dt 0 -x engine=bpf -q -n 'BEGIN { printf("%d %d %d %d %d %d %d %s\n", $pid == pid, $ppid == ppid, $uid, $gid, $euid, $egid, $sid > 0, $$pid == lltostr(pid) ? "s" : "x"); exit(0); }'
same "$T/out" "1 1 $(id -ru) $(id -rg) $(id -u) $(id -g) 1 s\n\n" "\$pid \$ppid \$uid \$gid \$euid \$egid \$sid \$\$pid"

# printf: DTrace refuses argument positions (%n$, also in * widths and
# precisions), naming the conversion; %? is a pointer's width in hex (16);
# a precision of 0 prints the whole string (%.0s, %.*s of 0), as DTrace's.
for f in '%1$d' 'a %d %*2$d' '%d %.*3$s' '%%%2$s'; do
	dt 1 -x engine=bpf -q -n "BEGIN { printf(\"$f\", 1, 2, \"x\"); exit(0); }"
	n=1
	case $f in a*|'%d'*) n=2 ;; esac
	[ "$f" = '%%%2$s' ] && n=1
	grep -q "error: format conversion #$n uses unsupported positional format (%n\$)" "$T/err" ||
		{ cat "$T/err" >&2; fail "$f refused"; }
	[ -s "$T/out" ] && fail "$f printed something"
done
dt 0 -x engine=bpf -q -n 'BEGIN { x = 0; printf("%?d|%.0s|%.*s|%3.0s|%.2s\n", 7, "hello", x, "hi", "abc", "xyz"); exit(0); }'
same "$T/out" "               7|hello|hi|abc|xy\n\n" "%?d, %.0s, %.*s of 0"

# printa's order: by value (then key); aggsortkey by key; aggsortrev reversed;
# aggsortkeypos the key to sort by first.
prog='BEGIN { @[1, "c"] = sum(5); @[2, "a"] = sum(1); @[3, "b"] = sum(3); exit(0); }'
order() { # the keys' order in the exit dump
	awk 'NF == 3 { printf "%s%s", $1, $2 }' "$T/out"
}
dt 0 -q -n "$prog"; [ "$(order)" = 2a3b1c ] || fail "printa's default order: $(order)"
dt 0 -q -x aggsortkey -n "$prog"; [ "$(order)" = 1c2a3b ] || fail "aggsortkey: $(order)"
dt 0 -q -x aggsortrev -n "$prog"; [ "$(order)" = 1c3b2a ] || fail "aggsortrev: $(order)"
dt 0 -q -x aggsortkey -x aggsortrev -n "$prog"; [ "$(order)" = 3b2a1c ] || fail "aggsortkey, aggsortrev: $(order)"
dt 0 -q -x aggsortkey -x aggsortkeypos=1 -n "$prog"; [ "$(order)" = 2a3b1c ] || fail "aggsortkeypos=1: $(order)"

# Options that change DTrace's output and are not done here are refused,
# never ignored; values DTrace refuses are refused in its words.
for x in aggpercpu flowindent stackindent=4; do
	dt 1 -q -x "$x" -n 'BEGIN { exit(0); }'
	grep -q "^dtrace: error: -x ${x%%=*}" "$T/err" || { cat "$T/err" >&2; fail "-x $x refused"; }
done
for x in strsize=1 strsize=-3 bufsize=-1; do
	dt 1 -q -x "$x" -n 'BEGIN { exit(0); }'
	same "$T/err" "dtrace: error: failed to set -x ${x%%=*}: Invalid value for specified option\n" "-x $x"
done
# (bufpolicy=ring and fill are done: t-consumer-buffers; an unknown one is refused)
printf '#pragma D option bufpolicy=wrap\nBEGIN { exit(0); }\n' >"$T/ring.d"
dt 1 -q -s "$T/ring.d"
grep -q "bufpolicy" "$T/err" || fail "#pragma D option bufpolicy=wrap refused"
dt 0 -q -x bufpolicy=switch -x strsize=2 -n 'BEGIN { exit(0); }'
# -x rawbytes: trace() of a string is a dump of its strsize + 1 bytes.
dt 0 -q -x rawbytes -x strsize=20 -n 'BEGIN { trace("abcdefgh"); exit(0); }'
same "$T/out" "\n             0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f  0123456789abcdef\n         0: 61 62 63 64 65 66 67 68 00 00 00 00 00 00 00 00  abcdefgh........\n        10: 00 00 00 00 00                                   .....\n\n" "rawbytes"
dt 0 -q -x rawbytes -x strsize=5 -n 'BEGIN { trace("abcdefgh"); exit(0); }'
same "$T/out" "\n             0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f  0123456789abcdef\n         0: 61 62 63 64 65 00                                abcde.\n\n" "rawbytes, a constant cut at strsize"

# Buffers smaller than what the program writes (a record as DTrace counts
# it: this one 12 bytes, codegen_buf.c): DTrace's refusal, whichever
# engine would run it (an ERROR clause included).
for x in aggsize=8 dynvarsize=3 bufsize=8; do
	dt 1 -q -x "$x" -n 'BEGIN { self->x = 1; @ = count(); printf("%d\n", 1); exit(0); } ERROR { exit(0); }'
	same "$T/err" "dtrace: error: could not enable tracing: Enabling exceeds size of buffer\n" "-x $x too small"
done

# Boolean options take DTrace's words: unset ones are the default, refused or not.
dt 0 -x quiet=no -x flowindent=off -x rawbytes=UnSeT -n 'BEGIN { exit(0); }'
grep -q ":BEGIN" "$T/out" || fail "quiet=no: the default record"
dt 0 -x quiet=SeT -n 'BEGIN { exit(0); }'
same "$T/out" "\n" "quiet=SeT"
dt 1 -x quiet=maybe -n 'BEGIN { exit(0); }'
same "$T/err" "dtrace: error: failed to set -x quiet: Invalid value for specified option\n" "quiet=maybe"


# An array no clause assigns: a thread's reads 0 (as an unassigned self->x
# does); a global one, like a scalar, is a name D does not know
# (D_IDENT_UNDEF: DTrace's err.D_IDENT_UNDEF.badureg.d), never run.
dt 0 -q -n 'BEGIN { printf("%d %d\n", self->a[1], self->b["k"] + 1); exit(0); }'
same "$T/out" "0 1\n\n" "a thread's array no clause assigns"
dt 1 -x errtags -n 'BEGIN { x = a[1]; }'
same "$T/err" "dtrace: invalid probe specifier BEGIN { x = a[1]; }: [D_IDENT_UNDEF] line 1: 'a' is not a variable or a builtin this D consumer knows\n" "a global array no clause assigns"
dt 1 -x errtags -n 'BEGIN { x = VALUE; }'
same "$T/err" "dtrace: invalid probe specifier BEGIN { x = VALUE; }: [D_IDENT_UNDEF] line 1: 'VALUE' is not a variable or a builtin this D consumer knows\n" "a name no clause assigns"

echo "ok"
