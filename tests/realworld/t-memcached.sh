#!/bin/bash
# memcached from Debian's source package, built by its own autotools
# (./configure --enable-dtrace && make: `dtrace -h`, a sed making the
# header's pointers const, -Werror -pedantic, and `dtrace -G` over all of
# memcached's objects) with SystemTap's tools and with usdtkit's, then
# compared: both build, no more header warnings with usdtkit, the same notes
# per provider, the same exact values traced by bpftrace from a server on
# loopback given set/get/delete commands, and `dtrace -l -p` on each server
# lists the probes with module and function.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/realworld/lib.sh"

rw_project memcached
rw_need_pkgs libevent-dev pkg-config make gcc
rw_fetch memcached

build_memcached() { # DIR
	cp -a "$RW_SRC/." "$1/"
	./configure --enable-dtrace CPPFLAGS="$RW_INC" && make -j2 V=1
}
for t in $TOOLS; do rw_build "$t" build_memcached; done
rw_check_builds
# Which dtrace and <sys/sdt.h> each build used, from its log and its
# dependency files.
for t in $TOOLS; do
	rw_tool_env "$t"
	grep -q "^$RW_DTRACE *-G " "$PW/$t.log" || rw_fail "$t: the build did not run $RW_DTRACE -G"
	eval "sdt_$t=\$(grep -ho '[^ ]*/sys/sdt\.h' \"\$PW/$t\"/.deps/memcached-memcached.Po | sort -u)"
done
# shellcheck disable=SC2154
rw_uses "$sdt_systemtap" "$sdt_usdtkit"
rw_check_warnings memcached_dtrace.h
rw_check_notes memcached memcached-debug

# -h and -G as the Makefile runs them, in each build's tree; -G writes to a
# scratch file (it reads the objects, and SystemTap's leaves them as they
# are; usdtkit's may rewrite probe sites in objects it is given, so each run
# gets fresh copies).
time_tools() {
	local t objs hms gms
	for t in $TOOLS; do
		rw_tool_env "$t"
		objs=$(sed -n 's/^.* -G -o memcached_dtrace\.o -s \.\/memcached_dtrace\.d //p' "$PW/$t.log")
		[ -n "$objs" ] || { rw_fail "$t: no -G command in the build log"; continue; }
		rm -rf "$T/time-$t" && mkdir "$T/time-$t" && cd "$T/time-$t"
		cp "$PW/$t/memcached_dtrace.d" .
		# shellcheck disable=SC2086
		(cd "$PW/$t" && cp $objs "$T/time-$t/")
		# What the tool itself prints into a build log (its -h and -G, once):
		# usdtkit's no more than SystemTap's.
		# shellcheck disable=SC2086
		{ "$RW_DTRACE" -h -s memcached_dtrace.d -o scratch.h &&
			"$RW_DTRACE" -G -o scratch_dtrace.o -s ./memcached_dtrace.d $objs; } >"$T/out-$t" 2>&1 ||
			rw_fail "$t: -h or -G failed in the scratch directory"
		eval "lines_$t=\$(wc -l <\"\$T/out-\$t\")"
		hms=$(rw_median_ms 7 "$RW_DTRACE" -h -s memcached_dtrace.d)
		# shellcheck disable=SC2086
		gms=$(rw_median_ms 7 "$RW_DTRACE" -G -o scratch_dtrace.o -s ./memcached_dtrace.d $objs)
		eval "h_$t=\$hms g_$t=\$gms"
	done
	cd "$T"
	# shellcheck disable=SC2154
	rw_row "lines dtrace -h and -G print" "$lines_systemtap" "$lines_usdtkit"
	if [ "$lines_usdtkit" -gt "$lines_systemtap" ]; then
		cat "$T/out-usdtkit" >&2
		rw_fail "usdtkit's dtrace prints $lines_usdtkit lines, SystemTap's $lines_systemtap"
	fi
	# shellcheck disable=SC2154
	rw_row "dtrace -h (median of 7)" "$h_systemtap" "$h_usdtkit"
	# shellcheck disable=SC2154
	rw_row "dtrace -G over $(echo "$objs" | wc -w) objects (median of 7)" "$g_systemtap" "$g_usdtkit"
}
time_tools

# The workload: a memcached on a free loopback port, one connection, text
# protocol commands with a known key and value.
PORT=""
MC_PID=""
at_exit 'stop_bg "$MC_PID" TERM 5'
start_server() { # TOOL
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$PW/$1/memcached" -u root -l 127.0.0.1 -p "$PORT" -U 0 -t 1 -m 16 >"$PW/$1.server.log" 2>&1 &
	MC_PID=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
		running "$MC_PID" || { cat "$PW/$1.server.log" >&2; fail "$1: memcached exited at start"; }
		sleep 0.05
	done
	fail "$1: memcached does not listen on $PORT"
}
workload() { # TOOL
	timeout 20 python3 - "$PORT" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
def cmd(c, end):
    s.sendall(c)
    buf = b""
    while not buf.endswith(end):
        d = s.recv(4096)
        if not d:
            raise SystemExit("connection closed after %r" % c)
        buf += d
    return buf
assert cmd(b"set rw-key 0 0 11\r\nhello world\r\n", b"\r\n") == b"STORED\r\n"
assert cmd(b"get rw-key\r\n", b"END\r\n") == b"VALUE rw-key 0 11\r\nhello world\r\nEND\r\n"
assert cmd(b"get rw-missing\r\n", b"END\r\n") == b"END\r\n"
assert cmd(b"delete rw-key\r\n", b"\r\n") == b"DELETED\r\n"
s.close()
EOF
}

# The probes and values expected: the key as a string of its length, the
# size with memcached's "\r\n" (11 + 2), the first CAS, -1 and 0 for a miss,
# the connection's fd the same in every probe.
cat >"$T/expected" <<'EOF'
item_link rw-key 6 13
assoc_insert rw-key 6
set (\d+) rw-key 6 13 (\d+)
get (\d+) rw-key 6 13 (\d+)
get (\d+) rw-missing 10 -1 0
delete (\d+) rw-key 6
item_unlink rw-key 6 13
EOF
BT_SCRIPT_FOR() { # BINARY
	local b=$1
	cat <<EOF
usdt:$b:memcached:assoc__insert { printf("assoc_insert %s %d\n", str(arg0, arg1), arg1); }
usdt:$b:memcached:item__link { printf("item_link %s %d %d\n", str(arg0, arg1), arg1, arg2); }
usdt:$b:memcached:command__set { printf("set %d %s %d %d %d\n", arg0, str(arg1, arg2), arg2, arg3, arg4); }
usdt:$b:memcached:command__get { printf("get %d %s %d %d %d\n", arg0, str(arg1, arg2), arg2, arg3, arg4); }
usdt:$b:memcached:command__delete { printf("delete %d %s %d\n", arg0, str(arg1, arg2), arg2); }
usdt:$b:memcached:item__unlink { printf("item_unlink %s %d %d\n", str(arg0, arg1), arg1, arg2); }
EOF
}

# The same workload under usdtkit's D consumer: DTrace's copyinstr(addr,
# len) of the keys and the sizes, each record exact, and a count per
# command probe in Ctrl-C's exit dump (its end was once lost here one run in
# two to five: timeout(1)'s relay of the one SIGINT counted as an impatient
# second one, fixed; dtrace/consumer/README.md).
D_SCRIPT='BEGIN { printf("ready\n"); }
memcached$target:::command-set { printf("set %s %d\n", copyinstr(arg1, arg2), arg3); }
memcached$target:::command-get { printf("get %s %d\n", copyinstr(arg1, arg2), arg3); }
memcached$target:::command-delete { printf("delete %s\n", copyinstr(arg1, arg2)); }
memcached$target:::command-* { @[probename] = count(); }'
# Ctrl-C's exit dump, as DTrace prints it: a blank line, then the
# aggregation by value, ties by key.
{
	printf 'ready\nset rw-key 13\nget rw-key 13\nget rw-missing -1\ndelete rw-key\n\n'
	printf '  %-50s %16d\n' command-delete 1 command-set 1 command-get 2
} >"$T/d-expected"

# dtrace -l -p on the running server: the probes traced, each with the
# module (memcached) and the function the sites are in (nm's names).
list_check() { # TOOL
	# gcc compiles process_get_command and do_slabs_free into clones
	# (.constprop.0, .part.0): the function is the source's, as DTrace names
	# it, not the clone's symbol.
	local m='memcached memcached'
	rw_check_list "$1" "$MC_PID" "$m complete_nread_ascii command-set" \
		"$m process_get_command command-get" "$m process_delete_command command-delete" \
		"$m assoc_insert assoc-insert" "$m do_item_link item-link" \
		"$m do_slabs_alloc slabs-allocate" "$m do_slabs_free slabs-free" \
		"$m conn_new conn-allocate"
}

for t in $TOOLS; do
	start_server "$t"
	rw_trace "$t" "$(BT_SCRIPT_FOR "$PW/$t/memcached")" workload "$T/expected"
	rw_dtrace "$t" "$MC_PID" "$D_SCRIPT" workload "$T/d-expected"
	list_check "$t"
	stop_bg "$MC_PID" TERM 5
	MC_PID=""
done
# The fd and CAS captured must be the same in set, get and delete.
for t in $TOOLS; do
	fds=$(sed -nE 's/^(set|get|delete) ([0-9]+) rw-key .*/\2/p' "$PW/$t.bt" | sort -u | wc -l)
	[ "$fds" = 1 ] || rw_fail "$t: the connection id differs between set, get and delete"
	cas=$(sed -nE 's/^(set|get) [0-9]+ rw-key 6 13 ([0-9]+)$/\2/p' "$PW/$t.bt" | sort -u)
	if [ "$(echo "$cas" | wc -l)" != 1 ] || [ "$cas" = 0 ]; then
		rw_fail "$t: CAS differs between set and get"
	fi
done
# shellcheck disable=SC2154
rw_row "bpftrace: 6 probes, exact values (strings as strings)" "$bt_systemtap" "$bt_usdtkit"
# shellcheck disable=SC2154
rw_row "dtrace -q -p -n: 3 probes, an aggregation, exact output" "$d_systemtap" "$d_usdtkit"
# shellcheck disable=SC2154
rw_row "dtrace -l -p: probes with module and function" "$list_systemtap" "$list_usdtkit"
rw_finish
