#!/bin/bash
# Fork children send nothing (kernel-helper/README.md, "Registration off the
# hot path": the child maps the same files, whose events already apply to
# it; the daemon finds it in /proc when it needs to). Against the stand-in
# server, which records every message with its sender's SO_PEERCRED pid: a
# program that forks children (with and without a dlopen'ed library loaded,
# across dlopen/dlclose cycles, and a grandchild) gets exactly its own
# messages, none from any child; every child runs and exits cleanly, the
# output is the same as with registration disabled, and errno is the same
# on both sides of fork(). A child ending with exit() sends nothing either.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"
build_progs gcc

# pid lines of the pids file, in order: parent, then each child
cmds=(pid "$T/pids" fork pid "$T/pids" probe \; dlopen "$LIB" fork pid "$T/pids" \;
	dlclose fork pid "$T/pids" \; dlopen "$LIB" dlclose dlopen "$LIB" dlclose dlopen "$LIB"
	fork pid "$T/pids" \; dlclose fork pid "$T/pids" fork pid "$T/pids" \; \; errno)
rm -f "$T/pids"
run_prog "$T/base.out" "$T/base.err" USDTKIT_DISABLE=1 -- "${cmds[@]}" || fail "baseline failed"
grep -q 'child errno after fork: 4321' "$T/base.out" || fail "baseline: fork changed errno?"
start_fake reply
rm -f "$T/pids"
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" -- "${cmds[@]}" || fail "the program failed"
cmp -s "$T/base.out" "$T/out" || { diff "$T/base.out" "$T/out" >&2; fail "stdout differs"; }
[ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "drti printed without debug"; }
grep -q 'child exited with 0' "$T/out" || fail "no child exited cleanly"
expect_no_grep 'child exited with [^0]' "$T/out" "every child exits 0"

mapfile -t pids < <(sed -n 's/^pid //p' "$T/pids")
expect_eq "${#pids[@]}" 7 "pids recorded (program + 6 children)"
parent=${pids[0]}
# the program's own: REGISTER of itself, then per dlopen of the library a
# REGISTER and per dlclose an UNREGISTER (4 dlopens, 4 dlcloses)
wait_msgs 9 || true
sleep 0.3 # a child's message, were one sent, would be here by now
msgs >"$T/msgs"
cat "$T/msgs"
A=$(msgs | sed -n 1p | sed -n 's/.*addr=\([0-9a-fx]*\).*/\1/p')
expect_eq "$(msgs | sed -n 1p | sed -n 's/.* pid=\([0-9]*\) .*/\1/p')" "$parent" "first REGISTER from the program"
expect_eq "$(nmsgs)" 9 "messages (the program's 1 + 4 REGISTERs and 4 UNREGISTERs)"
expect_eq "$(sed 's/.* pid=\([0-9]*\) .*/\1/' "$T/msgs" | sort -u | tr -d '\n')" "$parent" \
	"senders (the program only)"
for i in 1 2 3 4 5 6; do
	expect_eq "$(grep -c " pid=${pids[$i]} " "$T/msgs" || true)" 0 "child $i messages"
done
echo "ok: fork children send nothing; every child ran and exited 0"

# A child that exits through exit() sends nothing, nor does its parent at exit.
stop_fake
start_fake reply
rm -f "$T/pids"
cat >"$T/exitchild.c" <<'C'
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	int st;
	pid_t p = fork();

	if (p == 0)
		exit(0);
	return waitpid(p, &st, 0) == p && WIFEXITED(st) ? 0 : 1;
}
C
(cd "$B" && gcc -c "$T/exitchild.c" -o exitchild.o && gcc exitchild.o app-prov.o -o exitchild) ||
	fail "building exitchild"
env USDTKIT_HELPER_SOCKET="$SOCK" "$B/exitchild" || fail "exitchild failed"
wait_msgs 1 || true
sleep 0.3
msgs >"$T/msgs2"
expect_eq "$(grep -c ' type=1 ' "$T/msgs2")" 1 "REGISTERs (the parent's only)"
expect_eq "$(grep -c ' type=2 ' "$T/msgs2")" 0 "UNREGISTERs (none at exit)"
echo "ok: a child ending with exit() sends nothing"
