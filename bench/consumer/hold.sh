#!/bin/bash
# A new file's hold under a watching consumer (issue 32, items 4 and 7): a
# private helper daemon, then `dtrace -Z -q` with a clause on `prov*:::tick`
# watching it (kernel-helper/README.md, WATCH), and programs that each are a
# new file (a copy of one binary under a new name: a new inode, a new
# registration the daemon holds until dtrace answers). Each fires tick once,
# first thing in main(), and prints its pid and the wall-clock time at
# main(). Rounds take turns between the engine (new uprobe links to the
# loaded programs) and the bpftrace backend (a bpftrace started per new
# file), in the same run, K programs a round; before them, K programs with
# no dtrace (the start without a hold). Per mode:
#  - the hold, dtrace's side: from the daemon's NOTICE received to READY
#    sent (USDTKIT_ENGINE_TIMES=1 prints it), median, p99, maximum;
#  - exec -> main(): the shell's clock before the exec to the program's at
#    main(), the hold and the registration in it;
#  - the programs whose one firing dtrace printed.
# Prints a table (bench/README.md). Needs root, bpftrace, a build.
# Usage: bench/consumer/hold.sh [BUILDDIR] [ROUNDS] [K]
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$SRC/build}" && pwd)
ROUNDS=${2:-4}
K=${3:-25}
DTRACE=$B/dtrace/dtrace
HELPERD=$B/kernel-helper/helperd/usdtkit-helperd
[ -x "$DTRACE" ] && [ -x "$HELPERD" ] || { echo "no $DTRACE or $HELPERD: build first" >&2; exit 1; }
W=$(mktemp -d)
DPID="" DT=""
trap '[ -n "$DT" ] && kill "$DT" 2>/dev/null; [ -n "$DPID" ] && kill "$DPID" 2>/dev/null; sleep 1; rm -rf "$W"' EXIT
P=bhld$(tr -dc a-z </dev/urandom | head -c 6)

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
(cd "$W" && "$DTRACE" -h -s p.d -o p.h && cc -O2 -I"$SRC/include" -I. -c once.c -o once.o &&
	"$DTRACE" -G -s p.d -o pp.o once.o && cc -o once once.o pp.o)

export USDTKIT_HELPER_SOCKET="$W/helper.sock"
"$HELPERD" -f --socket "$USDTKIT_HELPER_SOCKET" --linger 0 2>"$W/daemon.log" &
DPID=$!
for _ in $(seq 100); do grep -q ': ready' "$W/daemon.log" && break; sleep 0.1; done
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$((10#$t))"; }
n=0
# MODE: K new programs; "MODE PID EXEC_TO_MAIN_US" into starts.
programs() {
	local t0 pid tmain
	for _ in $(seq "$K"); do
		n=$((n + 1))
		cp "$W/once" "$W/once$n"
		t0=$(now_us)
		USDTKIT_HELPER_HOLD_MS=5000 "$W/once$n" >"$W/main"
		read -r pid tmain <"$W/main"
		echo "$1 $pid $((tmain - t0))" >>"$W/starts"
	done
}
# ENGINE: a watching dtrace, K programs, its output and hold times kept.
round() {
	USDTKIT_ENGINE_TIMES=1 "$DTRACE" -x engine="$1" -Z -q -n "BEGIN { printf(\"ready\\n\"); }
$P*:::tick { printf(\"%d %d\\n\", pid, arg0); }" >"$W/out" 2>"$W/err" &
	DT=$!
	for _ in $(seq 300); do grep -q ready "$W/out" && break; sleep 0.1; done
	programs "$1"
	sleep 1
	kill -INT "$DT"
	wait "$DT" || true
	DT=""
	awk '/^[0-9]+ 7$/ { print $1 }' "$W/out" >>"$W/seen"
	sed -n "s/^dtrace: notice [0-9]* answered in \\([0-9.]*\\) ms$/$1 \\1/p" "$W/err" >>"$W/holds"
	grep -v "answered in\|cached object\|^dtrace: clang\|new files listed" "$W/err" >&2 || true
}
: >"$W/starts"
: >"$W/seen"
: >"$W/holds"
programs none
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then round bpf; round bpftrace; else round bpftrace; round bpf; fi
done

# q MODE FILE COLUMN Q: that quantile of the column over the mode's lines
q() {
	awk -v m="$1" -v c="$3" '$1 == m { print $c }' "$2" | sort -n |
		awk -v q="$4" '{ a[NR] = $1 } END { if (!NR) { print "-"; exit } i = int(q * NR + 0.999); if (i < 1) i = 1; print a[i] }'
}
traced() { awk 'FNR == NR { s[$1] = 1; next } $1 == m && ($2 in s)' m="$1" "$W/seen" "$W/starts" | wc -l; }
printf '%-44s %14s %14s %12s\n' "$((ROUNDS * K)) new files per mode, load $(cut -d' ' -f1 /proc/loadavg)" "engine" "bpftrace" "no dtrace"
printf '%-44s %14s %14s %12s\n' "hold, NOTICE to READY, median (ms)" "$(q bpf "$W/holds" 2 0.5)" "$(q bpftrace "$W/holds" 2 0.5)" -
printf '%-44s %14s %14s %12s\n' "  p99" "$(q bpf "$W/holds" 2 0.99)" "$(q bpftrace "$W/holds" 2 0.99)" -
printf '%-44s %14s %14s %12s\n' "  maximum" "$(q bpf "$W/holds" 2 1)" "$(q bpftrace "$W/holds" 2 1)" -
for x in 0.5 0.99; do
	printf '%-44s %14s %14s %12s\n' "exec -> main(), $([ $x = 0.5 ] && echo median || echo p99) (ms)" \
		"$(awk "BEGIN { printf \"%.1f\", $(q bpf "$W/starts" 3 $x) / 1000 }")" \
		"$(awk "BEGIN { printf \"%.1f\", $(q bpftrace "$W/starts" 3 $x) / 1000 }")" \
		"$(awk "BEGIN { printf \"%.1f\", $(q none "$W/starts" 3 $x) / 1000 }")"
done
printf '%-44s %14s %14s %12s\n' "first firing printed" "$(traced bpf) of $((ROUNDS * K))" "$(traced bpftrace) of $((ROUNDS * K))" -
