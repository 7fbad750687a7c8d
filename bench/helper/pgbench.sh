#!/bin/bash
# A real-world check of registration off the hot path: PostgreSQL 15 built
# with usdtkit (its build runs `dtrace -C -G`, so the postgres binary carries
# drti), one connection per transaction (`pgbench -C`: one fork of the
# postmaster per transaction), with usdtkit-helperd running versus
# registration disabled.
#
#   bench/helper/pgbench.sh [BUILDDIR] [ROUNDS] [SECONDS]   (build, 5, 8)
#
# PostgreSQL: Debian's postgresql-15 source as the realworld suite fetches
# and builds it (tests/realworld/t-postgresql-15.sh; run
# `sh scripts/realworld.sh postgresql-15` once: its SystemTap build under
# BUILDDIR/realworld/postgresql-15/systemtap is the starting point). It is
# copied to PGBENCH_CACHE (default /var/cache/usdtkit-bench/postgresql-15)
# once; every run then makes the -G object again with BUILDDIR's dtrace and
# relinks postgres, so the drti measured is always the tree's. (The objects
# were compiled against SystemTap's <sys/sdt.h>; usdtkit's `dtrace -G` takes
# them as it takes its own: drop-in.)
#
# Rounds alternate the two variants, each with its own server start: the
# postmaster started with USDTKIT_DISABLE=1, and started with
# USDTKIT_HELPER_SOCKET naming a private usdtkit-helperd (HELPERD_OPTS are
# passed to it). Each round runs `pgbench -C -n -S -T SECONDS -c 1` on a Unix
# socket; the result is the median tps of each variant and their ratio
# ("kept", target >= 97%). The cluster runs as the unprivileged user nobody
# in a temporary directory, removed at the end; the daemon is stopped with
# SIGTERM (it removes its events).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-build}
rounds=${2:-5}
secs=${3:-8}
case $builddir in /*) ;; *) builddir="$top/$builddir" ;; esac
dtrace="$builddir/dtrace/dtrace"
helperd="$builddir/kernel-helper/helperd/usdtkit-helperd"
src="$builddir/realworld/postgresql-15/systemtap"
cache=${PGBENCH_CACHE:-/var/cache/usdtkit-bench/postgresql-15}
[ "$(id -u)" -eq 0 ] || { echo "run as root (the daemon writes tracefs)" >&2; exit 1; }
for f in "$dtrace" "$helperd"; do
	[ -x "$f" ] || { echo "build usdtkit first: $f missing" >&2; exit 1; }
done
if [ ! -x "$cache/inst/bin/pgbench" ]; then
	[ -x "$src/inst/bin/pgbench" ] || {
		echo "no PostgreSQL build: run 'sh scripts/realworld.sh postgresql-15' first" >&2
		exit 1
	}
	mkdir -p "$(dirname "$cache")"
	rm -rf "$cache"
	cp -a "$src" "$cache"
fi
# The -G object (drti included) from this tree's dtrace, and postgres relinked.
rm -f "$cache/src/backend/utils/probes.o"
make -s -C "$cache/src/backend" postgres DTRACE="$dtrace" >"$cache/relink.log" 2>&1 ||
	{ tail -20 "$cache/relink.log" >&2; exit 1; }
cp "$cache/src/backend/postgres" "$cache/inst/bin/postgres"
readelf -S "$cache/inst/bin/postgres" | grep -q '\.note\.usdtkit' ||
	{ echo "postgres has no .note.usdtkit: not a usdtkit -G build" >&2; exit 1; }
bin=$cache/inst/bin

w=$(mktemp -d /tmp/usdtkit-pgbench.XXXXXX)
chmod 755 "$w"
daemon=""
as_pg() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
stop_server() { as_pg "$bin/pg_ctl" -D "$w/data" -m fast -w stop >/dev/null 2>&1 || true; }
cleanup() {
	stop_server
	[ -z "$daemon" ] || { kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; }
	rm -rf "$w"
}
trap cleanup EXIT
mkdir "$w/data" "$w/run"
chown nobody:nogroup "$w/data" "$w/run"
as_pg "$bin/initdb" -D "$w/data" -U postgres --auth=trust >"$w/initdb.log" 2>&1 ||
	{ cat "$w/initdb.log" >&2; exit 1; }

"$helperd" -f --socket "$w/d.sock" --state "$w/d.state" ${HELPERD_OPTS:-} 2>"$w/d.log" &
daemon=$!
for i in $(seq 250); do [ -S "$w/d.sock" ] && break; sleep 0.02; done
[ -S "$w/d.sock" ] || { cat "$w/d.log" >&2; exit 1; }

start_server() { # ENV...
	env "$@" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$bin/pg_ctl" -D "$w/data" -l "$w/run/server.log" -w \
		-o "-c listen_addresses='' -k $w/run -c max_connections=20" start >/dev/null
}
start_server USDTKIT_DISABLE=1
as_pg "$bin/pgbench" -h "$w/run" -U postgres -i -s 1 postgres >"$w/init.log" 2>&1 ||
	{ cat "$w/init.log" >&2; exit 1; }
stop_server

run() { # LABEL ENV...
	local l=$1 tps
	shift
	start_server "$@"
	tps=$(as_pg "$bin/pgbench" -h "$w/run" -U postgres -C -n -S -T "$secs" -c 1 postgres 2>&1 |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
	stop_server
	[ -n "$tps" ] || { echo "pgbench gave no tps" >&2; exit 1; }
	echo "$l $tps" >>"$w/tps"
}
for r in $(seq "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then
		run disabled USDTKIT_DISABLE=1
		run daemon USDTKIT_HELPER_SOCKET="$w/d.sock"
	else
		run daemon USDTKIT_HELPER_SOCKET="$w/d.sock"
		run disabled USDTKIT_DISABLE=1
	fi
done
# The daemon did register the server: its events existed during the run.
grep -q 'info: registered .*/postgres ' "$w/d.log" ||
	{ cat "$w/d.log" >&2; echo "the daemon never registered postgres" >&2; exit 1; }
med() { awk -v l="$1" '$1 == l { print $2 }' "$w/tps" | sort -n |
	awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
off=$(med disabled)
on=$(med daemon)
echo "pgbench -C -S -c 1 -T $secs, $rounds rounds each, median tps:"
echo "  registration disabled: $off"
echo "  usdtkit-helperd:       $on"
awk -v a="$off" -v b="$on" 'BEGIN { printf "  kept %.1f%% (target >= 97%%)\n", 100 * b / a }'
echo "  per round: $(tr '\n' ' ' <"$w/tps")"
