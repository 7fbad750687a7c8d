#!/bin/bash
# examples/runtime-c, built with the command its README gives (gcc, then
# clang) and traced as it says: bpftrace by pid reads job-start's label
# (made only while traced) and job-done's values, `dtrace -l -p` lists both
# probes with their DTrace names in the memfd module.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
need_tracefs
need_bpftrace
export USDTKIT="$USDTKIT_SRCDIR" USDTKIT_BUILD="$USDTKIT_BUILDDIR"
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"
prov="rtjobs$$"

# The sanitizer build's library needs the sanitizer runtimes in the program: clang's cc,
# with them.
compilers="gcc clang"
if [ -n "${USDTKIT_SANITIZE:-}" ]; then
	compilers=clang-san
	mkdir -p "$T/shims-clang-san"
	printf '#!/bin/sh\nexec clang -fsanitize=%s "$@"\n' "$USDTKIT_SANITIZE" >"$T/shims-clang-san/cc"
	chmod +x "$T/shims-clang-san/cc"
fi
for cc in $compilers; do
	mkdir -p "$T/$cc" && cd "$T/$cc"
	shims=$T/shims-clang-san
	[ "$cc" = clang-san ] || shims=$(compiler_shims "$cc")
	PATH="$shims:$PATH" run_readme_block "$EXAMPLES/runtime-c/README.md" "build runtime-c"
	# 1000 jobs 20 ms apart (scaled: it must outlive bpftrace's attach)
	./jobs "$prov" 1000 $((20 * TIME_FACTOR)) >"$T/jobs.out" 2>&1 &
	pid=$!
	at_exit "kill $pid 2>/dev/null"
	wait_until 10 "the jobs provider mapped" grep -q "/memfd:usdtkit:$prov (deleted)\$" "/proc/$pid/maps"
	"$DTRACE" -l -p "$pid" >"$T/l.out" 2>&1 || { cat "$T/l.out" >&2; fail "$cc: dtrace -l -p"; }
	expect_grep "^ *[0-9]+ +$prov$pid +memfd:usdtkit:$prov +job-start +job-start\$" "$T/l.out" "$cc: job-start listed"
	expect_grep "^ *[0-9]+ +$prov$pid +memfd:usdtkit:$prov +job-done +job-done\$" "$T/l.out" "$cc: job-done listed"
	BT_ARGS="-p $pid" bt_start "$T/bt.out" "
usdt:*:$prov:job__start { printf(\"start %d %s\\n\", arg0, str(arg1)); }
usdt:*:$prov:job__done { printf(\"done %d %d %d\\n\", arg0, arg1, arg2 > 15000 ? 1 : 0); }"
	bt_stop '^start [0-9]+ job [0-9]+ of 1000$' 3 '^done [0-9]+ (0|-1) 1$' 3
	# The label names the same job as the id; status -1 exactly on every third job.
	awk '$1 == "start" && $2 != $4 { bad = 1 } $1 == "done" && ($3 == -1) != ($2 % 3 == 0) { bad = 1 }
		END { exit bad }' "$T/bt.out" || { cat "$T/bt.out" >&2; fail "$cc: values"; }
	kill "$pid"
	wait "$pid" 2>/dev/null || true
done
exit 0
