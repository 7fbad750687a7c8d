#!/bin/bash
# `dtrace -h` on a generated provider of 1,000 probes with 10 arguments each,
# usdtkit's against SystemTap's /usr/bin/dtrace, in one run: a table of
# wall-clock times (best and median of RUNS), the ratio, and callgrind's
# instruction count for ours (whole process: start-up, parse, emit, write).
#   bench/dtrace-h/run.sh [BUILDDIR] [RUNS]   (default: build-hdr, 10)
# Targets (issue 3): at least 50x faster than SystemTap's and under 20 ms.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-build-hdr}
runs=${2:-10}
ours="$top/$builddir/dtrace/dtrace"
stap=/usr/bin/dtrace
[ -x "$ours" ] || { echo "build usdtkit first: $ours missing" >&2; exit 1; }
[ -x "$stap" ] || { echo "SystemTap's dtrace is not installed (systemtap-sdt-dev)" >&2; exit 1; }

w=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-h.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"

# 1,000 probes x 10 arguments of the types real providers use, named and
# unnamed, with comments, in the layout SystemTap's parser accepts (so its
# fast path, not its fallback, is what is measured).
python3 - <<'PY'
types = ["int", "char *", "uint64_t", "void *", "const char *", "long",
         "unsigned int", "uint32_t", "int64_t", "size_t"]
with open("big.d", "w") as f:
    f.write("/* generated: 1,000 probes, 10 arguments each */\n")
    f.write("provider bench {\n")
    for i in range(1000):
        args = ", ".join("%s a%d" % (t, j) if j % 2 else t for j, t in enumerate(types))
        f.write("\tprobe group%d__probe%d(%s);\n" % (i // 100, i, args))
    f.write("};\n")
PY

# best and median of $runs wall-clock runs, in ms
time_runs() {
	local n=$1 i t0 t1
	shift
	for ((i = 0; i < n; i++)); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; "$@" >&2 || true; exit 1; }
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f %.2f\n", a[1] / 1000, a[int((NR + 1) / 2)] / 1000 }'
}

# Both headers must define every probe, or the comparison means nothing.
"$ours" -h -s big.d -o ours.h
"$stap" -h -s big.d -o stap.h >/dev/null 2>&1
n_ours=$(grep -c '^#define BENCH_[A-Z0-9_]*_ENABLED()' ours.h)
n_stap=$(grep -c '^#define BENCH_[A-Z0-9_]*_ENABLED()' stap.h) # two per probe
[ "$n_ours" = 1000 ] || { echo "ours defined $n_ours probes, not 1000" >&2; exit 1; }
[ "$n_stap" = 2000 ] || { echo "SystemTap's defined $((n_stap / 2)) probes, not 1000" >&2; exit 1; }

srruns=$(((runs + 2) / 3))
read -r ours_best ours_med < <(time_runs "$runs" "$ours" -h -s big.d -o ours.h)
read -r stap_best stap_med < <(time_runs "$srruns" "$stap" -h -s big.d -o stap.h)
# -C adds a cc -E child: shown for completeness.
read -r cpp_best cpp_med < <(time_runs "$runs" "$ours" -C -h -s big.d -o ours-cpp.h)

instr="n/a (valgrind missing)"
if command -v valgrind >/dev/null; then
	valgrind --tool=callgrind --callgrind-out-file=cg.out "$ours" -h -s big.d -o cg.h \
		>/dev/null 2>cg.err || { cat cg.err >&2; exit 1; }
	instr=$(awk '/^summary:/ { print $2 }' cg.out)
	# Inclusive split: parsing (the front end) and emitting (the header emitter).
	split=$(callgrind_annotate --inclusive=yes cg.out 2>/dev/null |
		awk '$3 !~ /^=>/ && /:usdt_parse |:usdt_emit_header |:main / { fn = $3; sub(/.*:/, "", fn); print "    " fn ": " $1 " " $2 }' | sort -u)
fi

size_ours=$(wc -c <ours.h)
size_stap=$(wc -c <stap.h)
printf '\ndtrace -h, 1,000 probes x 10 arguments (%s bytes of .d); best / median of N runs\n\n' \
	"$(wc -c <big.d)"
printf '%-40s %10s %10s %5s %12s\n' "tool" "best ms" "median ms" "N" "header bytes"
printf '%-40s %10s %10s %5s %12s\n' "usdtkit dtrace -h" "$ours_best" "$ours_med" "$runs" "$size_ours"
printf '%-40s %10s %10s %5s %12s\n' "usdtkit dtrace -C -h (with cc -E)" "$cpp_best" "$cpp_med" "$runs" "-"
printf '%-40s %10s %10s %5s %12s\n' "SystemTap /usr/bin/dtrace -h" "$stap_best" "$stap_med" "$srruns" "$size_stap"
printf '\nratio SystemTap / usdtkit (best): %sx   (target: >= 50x, usdtkit < 20 ms)\n' \
	"$(awk -v a="$stap_best" -v b="$ours_best" 'BEGIN { printf "%.0f", a / b }')"
printf 'callgrind, usdtkit dtrace -h (whole process): %s instructions\n' "$instr"
[ -n "${split:-}" ] && printf '  of which (inclusive):\n%s\n' "$split"
exit 0
