#!/bin/bash
# A new file's hold under a watching consumer (issue 32, items 4 and 7): a
# private helper daemon (--linger 0), then programs that each are a new
# file (a copy of one binary under a new name: a new inode, a new
# registration), firing tick once, first thing in main(), and printing their
# pid and the wall-clock time at main(); each waits for the daemon's answer
# up to 5 s (USDTKIT_HELPER_TIMEOUT_MS and USDTKIT_HELPER_HOLD_MS: drti's
# 100 ms default for a first answer let programs go unheld, their firing
# lost, when the daemon itself took longer under load 20, with or without
# a tracer). Modes, in the same run, taking turns, K programs a round:
#  - dtrace: a `dtrace -Z -q` with a clause on `prov*:::tick` watching the
#    daemon (kernel-helper/README.md, WATCH), which holds each new file's
#    registration until dtrace has attached its sites (new uprobe links to
#    the programs already loaded) and answered READY;
#  - bpftrace by hand: what a bpftrace user does for a new file, bpftrace
#    has no way to be told of one: start `bpftrace -e 'usdt:FILE:prov:tick
#    { ... } BEGIN { printf("go\n"); }'` once the file is there, wait for
#    BEGIN's line (bpftrace runs BEGIN once every probe is attached), then
#    run the program;
#  - no tracer (the start without a hold);
#  - with HOLD_BEFORE=BUILDDIR, also dtrace -Z of that build (an earlier
#    version, for a before/after in the same run).
# Per mode:
#  - the hold on dtrace's side, from the daemon's NOTICE received to READY
#    sent (USDTKIT_ENGINE_TIMES=1 prints it), median, p99 and maximum, and
#    its parts: the listing (reading the new file's notes: dtrace's own
#    work) and the links (the time inside the kernel's bpf(BPF_LINK_CREATE):
#    its uprobe registration);
#  - the new file to its first firing traced: dtrace, the shell's clock
#    before the exec to the program's at main() (the registration and the
#    hold in it); bpftrace, from the file's copy to main() (bpftrace's start
#    and attach, then the program's exec); no tracer, exec to main();
#  - the programs whose one firing the tracer printed.
# Prints a table (bench/README.md, README.md here). Needs root, bpftrace, a
# build with usdtkit-helperd.
# Usage: [HOLD_BEFORE=BUILDDIR] bench/consumer/hold.sh [BUILDDIR] [ROUNDS] [K]
set -eu
# shellcheck source=bench/consumer/lib.sh
. "$(dirname "$0")/lib.sh"
bc_init "${1:-}" helperd bpftrace
ROUNDS=${2:-4}
K=${3:-25}
P=$(bc_provider bhld)

cat >"$W/p.d" <<EOF
provider $P { probe tick(int n); };
EOF
cat >"$W/once.c" <<EOF
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "p.h"
int main(void)
{
	struct timespec wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	${P^^}_TICK(7);
	printf("%d %ld\\n", (int)getpid(), wall.tv_sec * 1000000L + wall.tv_nsec / 1000);
	return 0;
}
EOF
bc_build p.d once.c once
bc_daemon 0
n=0

# run_new MODE T0: the next new program (copied already), from T0 (us);
# "MODE PID T0_TO_MAIN_US" into starts.
run_new() {
	local pid tmain
	USDTKIT_HELPER_TIMEOUT_MS=5000 USDTKIT_HELPER_HOLD_MS=5000 "$W/once$n" >"$W/main"
	read -r pid tmain <"$W/main"
	echo "$1 $pid $((tmain - $2))" >>"$W/starts"
}

# K new programs, exec to main() each (no tracer, or dtrace watching).
programs() {
	for _ in $(seq "$K"); do
		n=$((n + 1))
		cp "$W/once" "$W/once$n"
		run_new "$1" "$(now_us)"
	done
}

# A watching dtrace, K programs; what it printed and its hold times kept.
# MODE DTRACE: dtrace, or before and the other build's.
dtrace_round() {
	local dt
	USDTKIT_ENGINE_TIMES=1 "$2" -Z -q -n "BEGIN { printf(\"ready\\n\"); }
$P*:::tick { printf(\"%d %d\\n\", pid, arg0); }" >"$W/out" 2>"$W/err" &
	dt=$!
	bc_bg "$dt"
	for _ in $(seq 300); do grep -q ready "$W/out" && break; sleep 0.1; done
	programs "$1"
	sleep 1
	bc_stop "$dt"
	awk '/^[0-9]+ 7$/ { print $1 }' "$W/out" >>"$W/seen"
	sed -n "s/^dtrace: notice [0-9]* answered in \\([0-9.]*\\) ms$/$1 \\1/p" "$W/err" >>"$W/holds"
	sed -n "s/^dtrace: new files listed in \\([0-9.]*\\) ms, .* attached in \\([0-9.]*\\) ms (the kernel's links \\([0-9.]*\\) ms)$/$1 \\1 \\2 \\3/p" \
		"$W/err" >>"$W/parts"
	grep -v "answered in\|cached object\|^dtrace: clang\|new files listed" "$W/err" >&2 || true
}

# K new files, each traced as a bpftrace user would: bpftrace started on
# the file once it is there, the program run once bpftrace has attached.
bpftrace_round() {
	local t0 bt pid
	for _ in $(seq "$K"); do
		n=$((n + 1))
		cp "$W/once" "$W/once$n"
		t0=$(now_us)
		bpftrace -e "usdt:$W/once$n:$P:tick { printf(\"%d %d\\n\", pid, arg0); }
BEGIN { printf(\"go\\n\"); }" >"$W/bt.out" 2>"$W/bt.err" &
		bt=$!
		bc_bg "$bt"
		for _ in $(seq 3000); do grep -q '^go$' "$W/bt.out" && break; sleep 0.01; done
		run_new bpftrace "$t0"
		pid=$(tail -n 1 "$W/starts" | cut -d' ' -f2)
		for _ in $(seq 500); do grep -q "^$pid 7$" "$W/bt.out" && break; sleep 0.01; done
		bc_stop "$bt"
		grep -q "^$pid 7$" "$W/bt.out" && echo "$pid" >>"$W/seen"
	done
}

: >"$W/starts"
: >"$W/seen"
: >"$W/holds"
: >"$W/parts"
modes=(dtrace bpftrace none)
if [ -n "${HOLD_BEFORE:-}" ]; then
	BEFORE=$(cd "$HOLD_BEFORE" && pwd)/dtrace/dtrace
	[ -x "$BEFORE" ] || bc_fail "no $BEFORE"
	modes+=(before)
fi
# The modes take turns, each round starting one further, so that the
# shared machine's load falls on each alike.
for r in $(seq "$ROUNDS"); do
	for i in "${!modes[@]}"; do
		case ${modes[$(((i + r) % ${#modes[@]}))]} in
		dtrace) dtrace_round dtrace "$DTRACE" ;;
		before) dtrace_round before "$BEFORE" ;;
		bpftrace) bpftrace_round ;;
		none) programs none ;;
		esac
	done
done

# of MODE: the starts column (us) of that mode, in ms
of() { awk -v m="$1" '$1 == m { printf "%.1f\n", $3 / 1000 }' "$W/starts"; }
traced() { awk 'FNR == NR { s[$1] = 1; next } $1 == m && ($2 in s)' m="$1" "$W/seen" "$W/starts" | wc -l; }
# hold MODE Q, part MODE COLUMN Q
hold() { awk -v m="$1" '$1 == m { print $2 }' "$W/holds" | quantile "$2"; }
part() { awk -v m="$1" -v c="$2" '$1 == m { print $c }' "$W/parts" | quantile "$3"; }
cols=(dtrace bpftrace none)
title=("dtrace -Z" "bpftrace by hand" "no tracer")
if [ -n "${HOLD_BEFORE:-}" ]; then
	cols=(dtrace before bpftrace none)
	title=("dtrace -Z" "before" "bpftrace by hand" "no tracer")
fi
# row LABEL FUNCTION ARGS...: FUNCTION MODE ARGS... in each column
row() {
	local label=$1 f=$2 m v
	shift 2
	printf '%-42s' "$label"
	for m in "${cols[@]}"; do
		v=$("$f" "$m" "$@")
		printf ' %16s' "$v"
	done
	echo
}
dt_only() { # MODE F ARGS...: F's value for a dtrace mode, else -
	local m=$1 f=$2
	shift 2
	case $m in dtrace | before) "$f" "$m" "$@" ;; *) echo - ;; esac
}
two() { echo "$(part "$1" "$2" 0.5) / $(part "$1" "$2" 0.99)"; }
firsts() { of "$1" | quantile "$2"; }
printed() { case $1 in none) echo - ;; *) echo "$(traced "$1") of $((ROUNDS * K))" ;; esac; }
printf '%-42s' "$((ROUNDS * K)) new files per mode, load $(load)"
printf ' %16s' "${title[@]}"
echo
row "hold, NOTICE to READY, median (ms)" dt_only hold 0.5
row "  p99" dt_only hold 0.99
row "  maximum" dt_only hold 1
row "  its listing (dtrace's), median / p99" dt_only two 2
row "  its links (the kernel's), median / p99" dt_only two 4
row "new file to its first firing, median (ms)" firsts 0.5
row "  p99" firsts 0.99
row "first firing printed" printed
