#!/bin/bash
# `dtrace -G` on a 1,000-probe provider with 200 input objects (each with
# probe sites), usdtkit's against SystemTap's /usr/bin/dtrace (which ignores
# the objects), in one run. Prints a table of times and the ratio.
#   bench/dtrace-G/run.sh [BUILDDIR] [RUNS]   (default: build-link, 7)
# usdtkit reads and cross-checks all 200 objects; SystemTap only compiles.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-build-link}
runs=${2:-7}
ours="$top/$builddir/dtrace/dtrace"
stap=/usr/bin/dtrace
[ -x "$ours" ] || { echo "build usdtkit first: $ours missing" >&2; exit 1; }
[ -x "$stap" ] || { echo "SystemTap's dtrace is not installed (systemtap-sdt-dev)" >&2; exit 1; }

w=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-G.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"

# The provider: 1,000 probes with 0 to 3 arguments of assorted types.
python3 - <<'PY'
types = ["int", "char *", "uint64_t", "void *"]
with open("p.d", "w") as f:
    f.write("provider bench {\n")
    for i in range(1000):
        n = i % 4
        f.write("\tprobe p%d__x(%s);\n" % (i, ", ".join(types[:n])))
    f.write("};\n")
# 200 objects, each firing 5 probes (all 1,000 covered), two guarded.
for k in range(200):
    with open("o%03d.c" % k, "w") as f:
        f.write('#include <stdint.h>\n#include "p.h"\n')
        f.write("void f%d(int a, char *s, uint64_t u, void *v)\n{\n" % k)
        for j in range(5):
            i = k * 5 + j
            n = i % 4
            args = ", ".join(["a", "s", "u", "v"][:n])
            call = "BENCH_P%d_X(%s)" % (i, args)
            if j < 2:
                f.write("\tif (BENCH_P%d_X_ENABLED())\n\t\t%s;\n" % (i, call))
            else:
                f.write("\t%s;\n" % call)
        f.write("}\n")
PY
"$ours" -h -s p.d -o p.h
printf '%s\n' o*.c | xargs -P 2 -I{} sh -c 'cc -I"$1" -I. -O2 -fPIC -c "$2" -o "${2%.c}.o"' sh "$top/include" {}

# best and median of $runs wall-clock runs, in ms
time_runs() {
	local i t0 t1
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; "$@" >&2 || true; exit 1; }
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f %.1f\n", a[1] / 1000, a[int((NR + 1) / 2)] / 1000 }'
}

read -r ours_best ours_med < <(time_runs "$ours" -G -s p.d -o ours.o o*.o)
read -r alone_best alone_med < <(time_runs "$ours" -G -s p.d -o alone.o)
read -r stap_best stap_med < <(time_runs "$stap" -G -s p.d -o stap.o o*.o)
# Sanity: both objects define the 1,000 semaphores.
for f in ours.o stap.o; do
	n=$(nm "$f" | grep -c '_semaphore$')
	[ "$n" -eq 1000 ] || { echo "$f defines $n semaphores, not 1000" >&2; exit 1; }
done

printf '\ndtrace -G: 1,000 probes, 200 input objects (1,000 probe sites), %d runs each\n\n' "$runs"
row() { printf '| %-46s | %11s | %11s |\n' "$@"; }
row tool "best (ms)" "median (ms)"
printf '|%s|%s|%s|\n' "------------------------------------------------" "-------------" "-------------"
row "usdtkit dtrace -G, 200 objects cross-checked" "$ours_best" "$ours_med"
row "usdtkit dtrace -G, no objects" "$alone_best" "$alone_med"
row "SystemTap dtrace -G, 200 objects (ignored)" "$stap_best" "$stap_med"
awk -v a="$stap_med" -v b="$ours_med" 'BEGIN { printf "\nratio (SystemTap median / usdtkit median): %.2fx\n", a / b }'
