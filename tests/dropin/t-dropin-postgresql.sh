#!/bin/bash
# The PostgreSQL pattern, in a server laid out like PostgreSQL's tree and
# built with make (pgstyle/Makefile): `dtrace -C -h` on a provider full of
# cpp macros, the header's PROVIDER_ prefix renamed with sed
# (s/POSTGRESQL_/TRACE_POSTGRESQL_/g) and `const` inserted before `char *`
# with sed, then `dtrace -C -G` given every object of the server, which must
# come back byte for byte (the Makefile checks sha256 sums). The build is
# -Werror: the probes taking `char *` are called with `const char *`
# values, which compile only because the sed made them const. Then the
# probes are checked in gdb (names, $_probe_argN) and bpftrace (values, the
# _ENABLED()-guarded probe firing).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/dropin/lib.sh"

# The probes probes.d declares (after cpp), as provider:name.
declared=$(sed -n 's/^[[:space:]]*probe \([a-z_]*\)(.*/postgresql:\1/p' \
	"$USDTKIT_SRCDIR/tests/dropin/pgstyle/src/backend/utils/probes.d" | sort -u)
[ "$(echo "$declared" | wc -l)" -eq 11 ] || fail "probes.d: expected 11 probes"

for cc in $COMPILERS; do
	copy_project pgstyle "$cc"
	make DTRACE="$DTRACE" CC="$cc" SDT_CFLAGS="$SDT_CFLAGS" CFLAGS="-O2 -g -Wall -Wextra -Werror" \
		>make.log 2>&1 || { cat make.log >&2; fail "$cc: make"; }
	# The seds did their work on the generated header.
	h=src/include/utils/probes.h
	expect_no_grep '^#define POSTGRESQL_' "$h" "$cc: no macro keeps the POSTGRESQL_ prefix"
	expect_grep '^#define TRACE_POSTGRESQL_QUERY_DONE\(arg1\) \\$' "$h" "$cc: renamed probe macro"
	expect_grep '^#define TRACE_POSTGRESQL_QUERY_DONE_ENABLED\(\) \\$' "$h" "$cc: renamed _ENABLED()"
	expect_no_grep '[(,] *char \*' "$h" "$cc: a char * the const sed missed"
	expect_no_grep 'const const' "$h" "$cc: const added twice"

	expect_eq "$(gdb_probes minipg)" "$declared" "$cc: gdb info probes vs probes.d"

	# lock__wait__start(5, relid, 0, 0, 0, mode) for i = 0: relid 16384, mode 0.
	gdb_probe postgresql:lock__wait__start '2 700' ./minipg '$_probe_arg0' '$_probe_arg1' \
		'$_probe_arg5' >gdb.out
	expect_eq "$(tr '\n' ' ' <gdb.out | grep -o 'argc=6 5 16384 0 ')" "argc=6 5 16384 0 " \
		"$cc: gdb lock__wait__start arguments"
	# buffer__read__done(0, xid * 2, 1663, 5, 16384, -1, xid & 1), 7 arguments, xid 701.
	gdb_probe postgresql:buffer__read__done '1 701' ./minipg '$_probe_arg1' '$_probe_arg2' \
		'(int)$_probe_arg5' '$_probe_arg6' >gdb.out
	expect_eq "$(tr '\n' ' ' <gdb.out | grep -o 'argc=7 1402 1663 -1 1 ')" "argc=7 1402 1663 -1 1 " \
		"$cc: gdb buffer__read__done arguments"
	gdb_probe postgresql:lwlock__acquire '1 1' ./minipg '(char *)$_probe_arg0' >gdb.out
	expect_grep '"LockManager"$' gdb.out "$cc: gdb lwlock__acquire string"

	bt_run bt.out './minipg 3 900' '
usdt:./minipg:postgresql:transaction__start { printf("start %d\n", arg0); }
usdt:./minipg:postgresql:transaction__commit { printf("commit %d\n", arg0); }
usdt:./minipg:postgresql:query__start { printf("query %s\n", str(arg0)); }
usdt:./minipg:postgresql:statement__status { printf("status %s\n", str(arg0)); }
usdt:./minipg:postgresql:lwlock__acquire { printf("lwlock %s %d\n", str(arg0), arg1); }
usdt:./minipg:postgresql:checkpoint__start { printf("checkpoint %d\n", arg0); }'
	expect_grep '^checkpoint 3$' bt.out "$cc: checkpoint__start (argc)"
	for i in 0 1 2; do
		q=$([ $((i % 2)) -eq 1 ] && echo 'UPDATE t SET x = 1' || echo 'SELECT 1')
		expect_grep "^start $((900 + i))\$" bt.out "$cc: transaction__start $i"
		expect_grep "^commit $((900 + i))\$" bt.out "$cc: transaction__commit $i"
		expect_grep "^query $q\$" bt.out "$cc: query__start $i"
		# Guarded by _ENABLED(): fires only through the -G object's semaphore.
		expect_grep "^status ok $((900 + i))\$" bt.out "$cc: statement__status $i"
		expect_grep "^lwlock LockManager $i\$" bt.out "$cc: lwlock__acquire $i"
	done
done
echo "PostgreSQL pattern: -C -h, sed rename and const, -C -G on every object: probes right in gdb and bpftrace"
