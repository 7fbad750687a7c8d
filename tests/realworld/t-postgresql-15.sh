#!/bin/bash
# PostgreSQL 15 (postgresql-15) from Debian's source package, built by its
# own autotools (./configure --enable-dtrace: `dtrace -C -h -s probes.d`
# and a sed renaming the macros to TRACE_POSTGRESQL_*, then `dtrace -C -G
# -s probes.d` over every object of the backend) with SystemTap's tools and
# with usdtkit's; src/ only (server, libraries, client programs), at
# -O2 -g, without the optional libraries. Then compared: both build, no
# more header warnings with usdtkit, the same notes per provider, the same
# exact values traced by bpftrace from a server given known SQL through psql
# on a Unix socket, and `dtrace -l -p` on the postmaster lists the probes
# with module and function.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/realworld/lib.sh"

rw_project postgresql-15
rw_need_pkgs make gcc perl bison flex
rw_fetch postgresql-15

# Installed into the build's own prefix: initdb needs the share files.
# The system's time zones, as Debian's package does (no zic run).
build_pg() { # DIR
	cp -a "$RW_SRC/." "$1/"
	./configure --prefix="$1/inst" --enable-dtrace --enable-depend --without-readline \
		--without-zlib --without-icu --with-system-tzdata=/usr/share/zoneinfo \
		CFLAGS="-O2 -g" CPPFLAGS="$RW_INC" &&
		make -j2 -C src && make -C src install
}
for t in $TOOLS; do rw_build "$t" build_pg; done
rw_check_builds
# Which <sys/sdt.h>: the build's dependency files (gcc -MMD) leave out
# system headers, so xact.o's compile command from the log is run again
# with -M instead.
sdt_of() { # TOOL
	local cmd
	cmd=$(grep -m1 ' -c -o xact\.o xact\.c ' "$PW/$1.log")
	cmd=${cmd%% -c -o xact.o *}
	# shellcheck disable=SC2086
	(cd "$PW/$1/src/backend/access/transam" && $cmd -M xact.c) | tr ' ' '\n' | grep '/sys/sdt\.h$' | sort -u
}
for t in $TOOLS; do
	rw_tool_env "$t"
	grep -q "^$RW_DTRACE *-C -G " "$PW/$t.log" || rw_fail "$t: the build did not run $RW_DTRACE -G"
	eval "sdt_$t=\$(sdt_of $t)"
done
# shellcheck disable=SC2154
rw_uses "$sdt_systemtap" "$sdt_usdtkit"
rw_check_warnings probes.h
rw_check_notes inst/bin/postgres

# -h and -G as the Makefiles run them (-h in src/backend/utils, -G in
# src/backend over all the backend's objects), each writing a scratch file;
# -G on copies of the objects (usdtkit's may rewrite the sites of objects
# it is given).
time_tools() {
	local t objs hms gms
	for t in $TOOLS; do
		rw_tool_env "$t"
		objs=$(sed -n 's|^.* -C -G -s utils/probes\.d \(.*\) -o utils/probes\.o$|\1|p' "$PW/$t.log")
		[ -n "$objs" ] || { rw_fail "$t: no -G command in the build log"; continue; }
		rm -rf "$T/time-$t" && mkdir -p "$T/time-$t/utils"
		cp "$PW/$t/src/backend/utils/probes.d" "$T/time-$t/utils/"
		# shellcheck disable=SC2086
		(cd "$PW/$t/src/backend" && cp --parents $objs "$T/time-$t/")
		cd "$T/time-$t/utils"
		hms=$(rw_median_ms 7 "$RW_DTRACE" -C -h -s probes.d -o scratch.h)
		cd "$T/time-$t"
		# shellcheck disable=SC2086
		gms=$(rw_median_ms 7 "$RW_DTRACE" -C -G -s utils/probes.d $objs -o scratch.o)
		eval "h_$t=\$hms g_$t=\$gms"
		rm -rf "$T/time-$t"
	done
	cd "$T"
	# shellcheck disable=SC2154
	rw_row "dtrace -h (median of 7)" "$h_systemtap" "$h_usdtkit"
	# shellcheck disable=SC2154
	rw_row "dtrace -G over $(echo "$objs" | wc -w) objects (median of 7)" "$g_systemtap" "$g_usdtkit"
}
time_tools

# The workload: PostgreSQL refuses to run as root, so initdb, the server
# and psql run as nobody, with the data directory and the socket in the
# test's temporary directory; the server listens on no TCP port.
chmod 711 "$T"
AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$T")
PG_PID=""
at_exit 'stop_bg "$PG_PID" INT 10'
start_server() { # TOOL
	local bin=$PW/$1/inst/bin d=$T/pg-$1 i
	rm -rf "$d" && mkdir -p "$d/sock" && chown -R 65534:65534 "$d"
	"${AS_NOBODY[@]}" "$bin/initdb" -D "$d/data" -U rw --auth=trust --no-sync -E UTF8 --locale=C \
		>"$PW/$1.initdb.log" 2>&1 || { cat "$PW/$1.initdb.log" >&2; fail "$1: initdb"; }
	"${AS_NOBODY[@]}" "$bin/postgres" -D "$d/data" -k "$d/sock" -c listen_addresses= -c fsync=off \
		>"$PW/$1.server.log" 2>&1 &
	PG_PID=$! # setpriv and env exec: the postmaster
	for ((i = 0; i < 200; i++)); do
		"${AS_NOBODY[@]}" "$bin/psql" -X -q -h "$d/sock" -U rw -d postgres -c 'SELECT 1' >/dev/null 2>&1 &&
			[ "$(head -1 "$d/data/postmaster.pid")" = "$PG_PID" ] && return 0
		running "$PG_PID" || { cat "$PW/$1.server.log" >&2; fail "$1: postgres exited at start"; }
		sleep 0.1
	done
	fail "$1: postgres does not answer on $d/sock"
}
# One transaction block and one implicit transaction, each statement its
# own simple query (psql sends them one by one, semicolon included).
cat >"$T/workload.sql" <<'EOF'
BEGIN;
SELECT 'usdtkit rw probe' AS s;
COMMIT;
SELECT 42 AS answer;
EOF
chmod 644 "$T/workload.sql"
workload() { # TOOL
	"${AS_NOBODY[@]}" timeout 20 "$PW/$1/inst/bin/psql" -X -v ON_ERROR_STOP=1 -h "$T/pg-$1/sock" -U rw \
		-d postgres -f "$T/workload.sql" >"$PW/$1.psql.out" 2>&1 || { cat "$PW/$1.psql.out" >&2; return 1; }
}

# The probes of the session's backend (the pid whose statement__status
# first shows "BEGIN;": the backend's start-up transactions and the other
# processes' are not traced), each with the pid; exec_simple_query reports
# the activity (statement__status) before query__start. Then the checks
# below relate the values: one pid, the block's LocalTransactionId at start
# and commit, the next one the implicit transaction's.
cat >"$T/expected" <<'EOF'
status (\d+) BEGIN;
query_start (\d+) BEGIN;
transaction_start (\d+) (\d+)
query_done (\d+) BEGIN;
status (\d+) SELECT 'usdtkit rw probe' AS s;
query_start (\d+) SELECT 'usdtkit rw probe' AS s;
query_done (\d+) SELECT 'usdtkit rw probe' AS s;
status (\d+) COMMIT;
query_start (\d+) COMMIT;
transaction_commit (\d+) (\d+)
query_done (\d+) COMMIT;
status (\d+) SELECT 42 AS answer;
query_start (\d+) SELECT 42 AS answer;
transaction_start (\d+) (\d+)
transaction_commit (\d+) (\d+)
query_done (\d+) SELECT 42 AS answer;
EOF
BT_SCRIPT_FOR() { # BINARY
	local b=$1
	cat <<EOF
usdt:$b:postgresql:statement__status /@s == pid || (@s == 0 && str(arg0) == "BEGIN;")/ { @s = pid; printf("status %d %s\n", pid, str(arg0)); }
usdt:$b:postgresql:query__start /@s == pid/ { printf("query_start %d %s\n", pid, str(arg0)); }
usdt:$b:postgresql:query__done /@s == pid/ { printf("query_done %d %s\n", pid, str(arg0)); }
usdt:$b:postgresql:transaction__start /@s == pid/ { printf("transaction_start %d %u\n", pid, arg0); }
usdt:$b:postgresql:transaction__commit /@s == pid/ { printf("transaction_commit %d %u\n", pid, arg0); }
END { clear(@s); }
EOF
}
# The relations the regexps cannot state.
check_values() { # TOOL
	local out=$PW/$1.bt
	awk '
	$1 ~ /^(query_start|query_done|status|transaction_start|transaction_commit)$/ { pids[$2] = 1 }
	$1 == "transaction_start" { s[++ns] = $3 }
	$1 == "transaction_commit" { c[++nc] = $3 }
	END {
		n = 0; for (p in pids) n++
		if (n != 1) { print "traced from " n " processes, not 1"; exit 1 }
		if (ns != 2 || nc != 2) { print ns " transaction starts, " nc " commits, not 2 and 2"; exit 1 }
		if (s[1] != c[1] || s[2] != c[2]) { print "start and commit ids differ: " s[1] "/" c[1] ", " s[2] "/" c[2]; exit 1 }
		if (s[2] != s[1] + 1) { print "the second LocalTransactionId " s[2] " does not follow " s[1]; exit 1 }
	}' "$out" >&2 || { eval "bt_$1=WRONG"; rw_fail "$1: the traced ids do not relate as they must"; }
}

# The same workload under usdtkit's D consumer, as DTrace users trace
# PostgreSQL: `postgresql*` (the backend is a child of the postmaster, -p's
# process: a provider glob traces every process of the file), the session
# found by its "BEGIN;" and followed with a thread-local, the transactions
# counted in an aggregation; the whole output exact. statement-status also
# fires with NULL (the backend going idle): copyinstr(NULL) is an error in
# DTrace, so the script tests arg0 first.
D_SCRIPT='BEGIN { printf("ready\n"); }
postgresql*:::statement-status /arg0 && copyinstr(arg0) == "BEGIN;"/ { self->on = 1; }
postgresql*:::statement-status /self->on && arg0/ { printf("status %s\n", copyinstr(arg0)); }
postgresql*:::query-start /self->on/ { printf("query-start %s\n", copyinstr(arg0)); }
postgresql*:::query-done /self->on/ { printf("query-done %s\n", copyinstr(arg0)); }
postgresql*:::transaction-start /self->on/ { @tx["start"] = count(); }
postgresql*:::transaction-commit /self->on/ { @tx["commit"] = count(); }'
{
	printf 'ready\n'
	for q in "BEGIN;" "SELECT 'usdtkit rw probe' AS s;" "COMMIT;" "SELECT 42 AS answer;"; do
		printf 'status %s\nquery-start %s\nquery-done %s\n' "$q" "$q" "$q"
	done
	printf '\n'
	printf '  %-50s %16d\n' commit 2 start 2
} >"$T/d-expected"

# dtrace -l -p on the postmaster: the probes traced, with the module
# (postgres) and the function of each site in the source.
list_check() { # TOOL
	local p='postgresql postgres'
	rw_check_list "$1" "$PG_PID" "$p exec_simple_query query-start" \
		"$p exec_simple_query query-done" "$p pgstat_report_activity statement-status" \
		"$p StartTransaction transaction-start" "$p CommitTransaction transaction-commit"
}

for t in $TOOLS; do
	start_server "$t"
	rw_trace "$t" "$(BT_SCRIPT_FOR "$PW/$t/inst/bin/postgres")" workload "$T/expected"
	check_values "$t"
	rw_dtrace "$t" "$PG_PID" "$D_SCRIPT" workload "$T/d-expected"
	list_check "$t"
	stop_bg "$PG_PID" INT 10
	PG_PID=""
done
# shellcheck disable=SC2154
rw_row "bpftrace: 5 probes, exact values (strings as strings)" "$bt_systemtap" "$bt_usdtkit"
# shellcheck disable=SC2154
rw_row "dtrace -q -p -n: 5 probes, self->, an aggregation, exact output" "$d_systemtap" "$d_usdtkit"
# shellcheck disable=SC2154
rw_row "dtrace -l -p: probes with module and function" "$list_systemtap" "$list_usdtkit"
rw_finish
