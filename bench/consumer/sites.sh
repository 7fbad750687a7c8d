#!/bin/bash
# Attaching a description that matches 1,000 sites (issue 32, item 7): a
# program whose probe `bsite:::tick` has 1,000 sites (one function with the
# probe written 1,000 times), waiting; then
#  - dtrace (the engine, its object cached: clang not run) with the kernel's
#    multi-uprobe links (one bpf(BPF_LINK_CREATE) for the file's 1,000
#    sites; Linux 6.6), `dtrace -q -p PID -n 'bsite$target:::tick {
#    @ = count(); } BEGIN { printf("go\n"); exit(0); }'`, RUNS times: the
#    load and attach its USDTKIT_ENGINE_TIMES=1 line says, the command to
#    BEGIN's line (printed once every site is attached) and to its exit;
#  - once each (their exit takes minutes: every perf-event uprobe's
#    teardown waits for an RCU grace period), the same with
#    USDTKIT_UPROBE_MULTI=0 (one perf-event uprobe link a site), and
#    bpftrace by hand, `usdt:PATH:bsite:tick /pid == PID/ { @ = count(); }`
#    with the same BEGIN (bpftrace attaches every probe before BEGIN).
# Needs root, clang, bpftrace, a build.
# Usage: bench/consumer/sites.sh [BUILDDIR] [RUNS] [SITES]
set -eu
# shellcheck source=bench/consumer/lib.sh
. "$(dirname "$0")/lib.sh"
bc_init "${1:-}" bpftrace
RUNS=${2:-5}
NS=${3:-1000}

echo "provider bsite { probe tick(int n); };" >"$W/p.d"
{
	echo '#include <unistd.h>'
	echo '#include "p.h"'
	echo 'volatile int go;'
	echo 'static void sites(void)'
	echo '{'
	for i in $(seq "$NS"); do echo "	if (go == $i) BSITE_TICK($i);"; done
	echo '}'
	echo 'int main(void) { sites(); sleep(600); return 0; }'
} >"$W/many.c"
bc_build p.d many.c many -O1
"$W/many" &
BG=$!
bc_bg "$BG"
sleep 0.5

# timed CMD...: "MS_TO_GO MS_TO_EXIT" from starting CMD to its first line
# "go" and to its end.
timed() {
	local t0 tgo=""
	t0=$(now_us)
	while read -r l; do
		[ -z "$tgo" ] && [ "${l%% *}" = go ] && tgo=$(($(now_us) - t0))
	done < <("$@" 2>"$W/stderr")
	echo "$((${tgo:--1000} / 1000)) $((($(now_us) - t0) / 1000))"
}
D="bsite\$target:::tick { @ = count(); } BEGIN { printf(\"go\\n\"); exit(0); }"
"$DTRACE" -q -p "$BG" -n "$D" >/dev/null 2>&1 || true # the object into the cache
for _ in $(seq "$RUNS"); do
	USDTKIT_ENGINE_TIMES=1 timed "$DTRACE" -q -p "$BG" -n "$D" >>"$W/multi"
	grep -q "($NS sites, multi" "$W/stderr" || { cat "$W/stderr" >&2; echo "not $NS sites by multi-uprobe links" >&2; exit 1; }
	sed -n 's/.*load and attach \([0-9.]*\) ms.*/\1/p' "$W/stderr" >>"$W/attach1"
done
USDTKIT_ENGINE_TIMES=1 USDTKIT_UPROBE_MULTI=0 timed "$DTRACE" -q -p "$BG" -n "$D" >"$W/single"
sed -n 's/.*load and attach \([0-9.]*\) ms.*/\1/p' "$W/stderr" >"$W/attach0"
BPFTRACE_MAX_PROBES=$((NS + 100)) timed bpftrace -e "usdt:$W/many:bsite:tick /pid == $BG/ { @ = count(); } BEGIN { printf(\"go\n\"); exit(); }" >"$W/bt"
col() { awk -v c="$1" '{ print $c }'; }
printf '%-44s %14s %14s %12s\n' "$NS sites, load $(load)" "multi-uprobe" "per site" "bpftrace"
printf '%-44s %11s ms %11s ms %12s\n' "load and attach (dtrace's own count)" "$(median <"$W/attach1")" "$(cat "$W/attach0")" -
printf '%-44s %11s ms %11s ms %9s ms\n' "command to BEGIN (every site attached)" "$(col 1 <"$W/multi" | median)" "$(col 1 <"$W/single")" "$(col 1 <"$W/bt")"
printf '%-44s %11s ms %11s ms %9s ms\n' "command to its exit (links torn down)" "$(col 2 <"$W/multi" | median)" "$(col 2 <"$W/single")" "$(col 2 <"$W/bt")"
echo "(multi-uprobe: the median of $RUNS runs; per site and bpftrace: one run each)"
