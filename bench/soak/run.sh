#!/bin/bash
# The full soak of issue 7 (README.md here): 50,000 short-lived probed
# processes and 1,000 dlopen/dlclose cycles against usdtkit-helperd built
# with AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer at its
# exit), and optionally (--plain) the same against a normal build at the
# same time, for comparison.
#
#   bench/soak/run.sh [--processes N] [--cycles N] [--jobs J] [--batch N]
#                     [--bound KIB] [--plain] [--no-build] [--out DIR]
#
# The soak itself is tests/soak/t-soak.sh (the meson test runs it reduced);
# this script builds the trees, gives it the full sizes and keeps its output
# (samples.tsv, summary.txt, the daemon log's tail) under --out. Needs root
# and tracefs. Runs niced.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
procs=50000 cycles=1000 jobs=2 batch=2500 bound=2048 plain=0 build=1
out=${TMPDIR:-/tmp}/usdtkit-soak-$(date +%Y%m%d-%H%M%S)
while [ $# -gt 0 ]; do
	case $1 in
	--processes) procs=$2; shift ;;
	--cycles) cycles=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	--batch) batch=$2; shift ;;
	--bound) bound=$2; shift ;;
	--plain) plain=1 ;;
	--no-build) build=0 ;;
	--out) out=$2; shift ;;
	*) echo "usage: $0 [--processes N] [--cycles N] [--jobs J] [--batch N] [--bound KIB] [--plain] [--no-build] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "the soak needs root (tracefs, uprobes)" >&2; exit 1; }

# build-soak: ASan + UBSan (-Db_lundef=false: clang's sanitizer runtimes
# leave symbols undefined at link time); build-soak-plain: the normal build.
setup() { # DIR [meson options]
	local d=$top/$1
	shift
	[ "$build" -eq 1 ] || return 0
	[ -d "$d" ] || nice -n 10 meson setup "$d" "$top" "$@" >/dev/null
	nice -n 10 ninja -C "$d" >/dev/null
}
setup build-soak -Db_sanitize=address,undefined -Db_lundef=false
[ "$plain" -eq 0 ] || setup build-soak-plain

run() { # BUILDDIR NAME
	local d=$top/$1 o=$out/$2 rc=0
	mkdir -p "$o"
	echo "== $2 ($1): $procs processes, $jobs at a time; 3 x $cycles dlopen/dlclose cycles" >&2
	USDTKIT_SRCDIR=$top USDTKIT_BUILDDIR=$d DTRACE=$d/dtrace/dtrace \
		SOAK_PROCESSES=$procs SOAK_JOBS=$jobs SOAK_BATCH=$batch SOAK_CYCLES=$cycles \
		SOAK_RSS_GROWTH_KIB=$bound SOAK_OUT=$o \
		/usr/bin/time -f "wall %e s, user %U s, system %S s (the whole run, builds included)" \
		nice -n 10 bash "$top/tests/soak/t-soak.sh" >"$o/stdout" 2>"$o/stderr" || rc=$?
	cat "$o/stdout"
	tail -5 "$o/stderr"
	echo "== $2: $([ $rc -eq 0 ] && echo passed || echo "FAILED ($rc)"); output in $o" >&2
	return $rc
}
# With --plain both soaks run at once: on this shared 2-core machine the
# comparison is then made under the same load (and it halves the time).
mkdir -p "$out"
rc=0
if [ "$plain" -eq 1 ]; then
	run build-soak-plain plain >"$out/plain.txt" 2>&1 &
	plain_pid=$!
fi
run build-soak asan || rc=1
if [ "$plain" -eq 1 ]; then
	wait "$plain_pid" || rc=1
	cat "$out/plain.txt"
fi
exit $rc
