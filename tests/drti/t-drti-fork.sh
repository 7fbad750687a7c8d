#!/bin/bash
# Fork children that never exec are registered with their own pid (the
# server's SO_PEERCRED pid, which must be the child's as the child itself
# reports it): the program's module, and a dlopen'ed library's while it is
# loaded. After dlclose the library's fork handler is gone: a child forked
# then registers only the program and does not crash jumping into the
# unmapped library (glibc removes a DSO's pthread_atfork handlers at
# dlclose); dlopen/dlclose cycles do not pile up handlers. errno is the same
# on both sides of fork() as with registration disabled.
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
wait_msgs 18 || true
msgs >"$T/msgs"
cat "$T/msgs"
A=$(msgs | sed -n 1p | sed -n 's/.*addr=\([0-9a-fx]*\).*/\1/p')
expect_eq "$(msgs | sed -n 1p | sed -n 's/.* pid=\([0-9]*\) .*/\1/p')" "$parent" "first REGISTER from the program"
# REGISTER addresses per pid
regs() { grep " pid=$1 " "$T/msgs" | grep ' type=1 ' | sed 's/.*addr=//' | sort | tr '\n' ' '; }
# the library's address: the program's second REGISTER
L=$(grep " pid=$parent " "$T/msgs" | grep ' type=1 ' | sed -n 2p | sed 's/.*addr=//')
[ -n "$L" ] && [ "$L" != "$A" ] || fail "no library REGISTER from the program"
# child 1: program only; child 2: program + library; child 3 (after dlclose):
# program only; child 4 (after 3 dlopen/dlclose cycles, library loaded):
# program + library, once each; child 5 (after dlclose) and its own child 6:
# program only.
want_prog="$A "
want_both=$(printf '%s\n%s\n' "$A" "$L" | sort | tr '\n' ' ')
expect_eq "$(regs "${pids[1]}")" "$want_prog" "child 1 registrations"
expect_eq "$(regs "${pids[2]}")" "$want_both" "child 2 (library loaded) registrations"
expect_eq "$(regs "${pids[3]}")" "$want_prog" "child 3 (after dlclose) registrations"
expect_eq "$(regs "${pids[4]}")" "$want_both" "child 4 (after dlopen/dlclose cycles) registrations"
expect_eq "$(regs "${pids[5]}")" "$want_prog" "child 5 registrations"
expect_eq "$(regs "${pids[6]}")" "$want_prog" "grandchild 6 registrations"
# children end with _exit(): they send no UNREGISTER (exec and _exit run no
# destructors; the daemon notices the exit itself)
for i in 1 2 3 4 5 6; do
	expect_eq "$(grep " pid=${pids[$i]} " "$T/msgs" | grep -c ' type=2 ' || true)" 0 "child $i UNREGISTERs"
done
echo "ok: fork children register with their own pid, the modules they have"

# A child that exits through exit() unregisters like its parent, without waiting.
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
wait_msgs 4 || true
msgs >"$T/msgs2"
expect_eq "$(grep -c ' type=1 ' "$T/msgs2")" 2 "REGISTERs (parent, child)"
expect_eq "$(grep -c ' type=2 ' "$T/msgs2")" 2 "UNREGISTERs (parent, child)"
expect_eq "$(sed 's/.* pid=\([0-9]*\) .*/\1/' "$T/msgs2" | sort -u | wc -l)" 2 "distinct senders"
echo "ok: a child ending with exit() unregisters"
