#!/bin/bash
# dtrace -x engine=bpf (D -> BPF C -> clang -> libbpf, dtrace/engine) beside
# bpftrace running the same program written by hand, in the same run:
#  - start to attached: from the command to the first line its BEGIN prints
#    (both engines fire BEGIN once every probe is attached), dtrace with an
#    program new to the cache (cold: clang runs) and with the object cached;
#  - records delivered at saturation: N firings back to back, each a printf
#    of two strings; the lines that reach the output;
#  - the traced program's cost per firing (its CPU time over its firing
#    loop, the kernel's work for each firing included) for that printf and
#    for a count() keyed by the two strings, at the same string size (64,
#    bpftrace's default; dtrace -x strsize=64) and at DTrace's 256.
# Prints a table (bench/README.md, bench/consumer/README.md). Needs root,
# clang, bpftrace.   Usage: bench/consumer/engine.sh [BUILDDIR] [RUNS] [N]
set -eu
# shellcheck source=bench/consumer/lib.sh
. "$(dirname "$0")/lib.sh"
bc_init "${1:-}" bpftrace clang
RUNS=${2:-5}
N=${3:-200000}

# fire N FILE [PAUSE_MS]: bench:::two("GET /index.html", "curl/8.1") N times
# (without a pause: saturation), then the loop's clock and CPU time in ns
# into FILE. With a pause it is the long-running target of the start rows.
cat >"$W/bench.d" <<'D'
provider bench { probe two(char *a, char *b); };
D
cat >"$W/fire.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "bench.h"
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;
	int pause_ms = argc > 3 ? atoi(argv[3]) : 0;
	struct timespec a, b, ca, cb, p = {0, pause_ms * 1000000L};
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	for (i = 0; i < n; i++) {
		BENCH_TWO("GET /index.html", "curl/8.1");
		if (pause_ms)
			nanosleep(&p, NULL);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (argc > 2 && (f = fopen(argv[2], "w"))) {
		fprintf(f, "%lld %lld\n", (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec,
			(cb.tv_sec - ca.tv_sec) * 1000000000LL + cb.tv_nsec - ca.tv_nsec);
		fclose(f);
	}
	return 0;
}
C
bc_build bench.d fire.c fire
F=$W/fire

"$F" 100000000 "" 50 >/dev/null &
BG=$!
bc_bg "$BG"
sleep 0.5
D_PROG="bench\$target:::two { printf(\"%s %s\\n\", copyinstr(arg0), copyinstr(arg1)); } BEGIN { printf(\"go\\n\"); }"
B_PROG="usdt:$F:bench:two /pid == $BG/ { printf(\"%s %s\\n\", str(arg0), str(arg1)); } BEGIN { printf(\"go\\n\"); }"
# cold: a program new to the cache (its objects removed before each run;
# clang's version, asked once per clang, stays known, as on a used machine)
mkdir -p "$W/warm" "$W/cold"
USDTKIT_CACHE_DIR=$W/cold "$DTRACE" -x engine=bpf -e -n 'BEGIN { exit(0); }' >/dev/null 2>&1
USDTKIT_CACHE_DIR=$W/warm "$DTRACE" -x engine=bpf -q -p "$BG" -n "$D_PROG" -n 'BEGIN { exit(0); }' \
	>/dev/null 2>&1 || true
USDTKIT_CACHE_DIR=$W/warm until_go "$DTRACE" -x engine=bpf -q -p "$BG" -n "$D_PROG" >/dev/null
# The commands take turns, run after run: the shared machine's load falls on each alike.
for _ in $(seq "$RUNS"); do
	rm -f "$W/cold"/*.bpfo
	USDTKIT_CACHE_DIR=$W/cold until_go "$DTRACE" -x engine=bpf -q -p "$BG" -n "$D_PROG" >>"$W/cold_t"
	USDTKIT_CACHE_DIR=$W/warm until_go "$DTRACE" -x engine=bpf -q -p "$BG" -n "$D_PROG" >>"$W/warm_t"
	until_go bpftrace -e "$B_PROG" >>"$W/bt"
done
kill "$BG"
bc_unbg "$BG"

# run_fire OUT CMD...: the lines CMD printed (its records) into OUT's
# first column, the traced loop's CPU ns per firing into the second.
run_fire() {
	local out=$1 cpu lines
	shift
	rm -f "$W/loop"
	"$@" >"$W/lines" 2>"$W/err" || true
	read -r _ cpu <"$W/loop" || true
	[ "${cpu:-0}" -gt 0 ] || { cat "$W/err" >&2; echo "the traced program wrote no loop time: $*" >&2; exit 1; }
	lines=$(grep -c '^GET /index.html curl/8.1$' "$W/lines" || true)
	echo "$lines $((cpu / N))" >>"$out"
}
DP="bench\$target:::two { printf(\"%s %s\\n\", copyinstr(arg0), copyinstr(arg1)); }"
DC="bench\$target:::two { @[copyinstr(arg0), copyinstr(arg1)] = count(); }"
BP="usdt:$F:bench:two /pid == cpid/ { printf(\"%s %s\\n\", str(arg0), str(arg1)); }"
BC="usdt:$F:bench:two /pid == cpid/ { @[str(arg0), str(arg1)] = count(); }"
export USDTKIT_CACHE_DIR=$W/warm
for _ in $(seq "$RUNS"); do
	run_fire "$W/d_p64" "$DTRACE" -x engine=bpf -x strsize=64 -q -c "$F $N $W/loop" -n "$DP"
	run_fire "$W/b_p64" bpftrace -c "$F $N $W/loop" -e "$BP"
	run_fire "$W/d_p256" "$DTRACE" -x engine=bpf -q -c "$F $N $W/loop" -n "$DP"
	run_fire "$W/d_c64" "$DTRACE" -x engine=bpf -x strsize=64 -q -c "$F $N $W/loop" -n "$DC"
	run_fire "$W/b_c64" bpftrace -c "$F $N $W/loop" -e "$BC"
	run_fire "$W/d_c256" "$DTRACE" -x engine=bpf -q -c "$F $N $W/loop" -n "$DC"
	run_fire "$W/u" "$F" "$N" "$W/loop"
done
col() { cut -d' ' -f"$1" "$2" | median; }
ratio() { echo "scale=2; $1 / $2" | bc -l; }

c=$(median <"$W/cold_t") w=$(median <"$W/warm_t") b=$(median <"$W/bt")
printf '%-50s %16s %12s %7s\n' "median of $RUNS runs, load $(load)" "dtrace engine=bpf" "bpftrace" "ratio"
printf '%-50s %13d ms %9d ms %7s\n' "start to attached, cold (clang runs)" $((c / 1000)) $((b / 1000)) "$(ratio "$c" "$b")"
printf '%-50s %13d ms %9d ms %7s\n' "start to attached, cached object" $((w / 1000)) $((b / 1000)) "$(ratio "$w" "$b")"
printf '%-50s %16s %12s\n' "records delivered of $N at saturation, strsize 64" \
	"$(col 1 "$W/d_p64")" "$(col 1 "$W/b_p64")"
printf '%-50s %16s\n' "  dtrace at strsize 256" "$(col 1 "$W/d_p256")"
u=$(col 2 "$W/u")
printf '%-50s %13s ns %9s ns %7s\n' "per firing, printf of two strings, strsize 64" \
	"$(col 2 "$W/d_p64")" "$(col 2 "$W/b_p64")" "$(ratio "$(col 2 "$W/d_p64")" "$(col 2 "$W/b_p64")")"
printf '%-50s %13s ns\n' "  dtrace at strsize 256" "$(col 2 "$W/d_p256")"
printf '%-50s %13s ns %9s ns %7s\n' "per firing, count() keyed by two strings, 64" \
	"$(col 2 "$W/d_c64")" "$(col 2 "$W/b_c64")" "$(ratio "$(col 2 "$W/d_c64")" "$(col 2 "$W/b_c64")")"
printf '%-50s %13s ns\n' "  dtrace at strsize 256" "$(col 2 "$W/d_c256")"
printf '%-50s %13s ns\n' "per firing, untraced" "$u"
