#!/bin/bash
# A multi-uprobe link refused (dtrace/engine/loader.c, fall_back()): where
# the kernel has BPF_TRACE_UPROBE_MULTI (6.6) the engine attaches a file's
# sites by one link; a kernel that refuses it (here made to: the test knob
# USDTKIT_UPROBE_MULTI=refused asks the kernel with a flag it does not know,
# and it answers EINVAL) gets a link a site instead, without a word on
# stdout or stderr, once. (1) A probe with three sites, at the start: every
# site's firing is printed. (2) Retained enablings: two new files after the
# start, the first one's refusal loads the programs again, the second is
# attached a link a site at once; each one's single firing is printed.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
command -v cc >/dev/null || fail "no C compiler"
IFS=. read -r major minor _ <<<"$(uname -r)"
if [ "$major" -lt 6 ] || { [ "$major" = 6 ] && [ "$minor" -lt 6 ]; }; then
	echo "Linux $(uname -r) has no multi-uprobe links: nothing to refuse"
	exit 77
fi

P=dtmr$(tr -dc '[:lower:]' </dev/urandom | head -c 6)
mkdir -p "$T/b"
echo "provider $P { probe tick(int n); };" >"$T/b/p.d"
cat >"$T/b/three.c" <<EOF
#include "p.h"
int main(void)
{
	${P^^}_TICK(1);
	${P^^}_TICK(2);
	${P^^}_TICK(3);
	return 0;
}
EOF
printf '#include "p.h"\nint main(void)\n{\n\t%s_TICK(7);\n\treturn 0;\n}\n' "${P^^}" >"$T/b/once.c"
(
	cd "$T/b" || exit 1
	"$DTRACE" -h -s p.d -o p.h &&
		for x in three once; do
			cc -O2 -I"$SDT_INC" -I. -c $x.c -o $x.o &&
				"$DTRACE" -G -s p.d -o p$x.o $x.o &&
				cc -o $x $x.o p$x.o || exit 1
		done
) || fail "building the test programs"

# (1) at the start; first the control: the kernel takes the one link
D="$P\$target:::tick { printf(\"%d\\n\", arg0); }"
USDTKIT_ENGINE_TIMES=1 dt 0 -q -c "$T/b/three" -n "$D"
grep -q "(3 sites, multi-uprobe links)" "$T/err" || { cat "$T/err" >&2; fail "no multi-uprobe link here to refuse"; }
USDTKIT_UPROBE_MULTI=refused USDTKIT_ENGINE_TIMES=1 dt 0 -q -c "$T/b/three" -n "$D"
grep -q "multi-uprobe link refused (Invalid argument): a link a site" "$T/err" ||
	{ cat "$T/err" >&2; fail "the refusal was not the kernel's"; }
same "$T/out" "1\n2\n3\n\n" "three sites, a link each after the refusal"
USDTKIT_UPROBE_MULTI=refused dt 0 -q -c "$T/b/three" -n "$D"
same "$T/out" "1\n2\n3\n\n" "three sites, a link each after the refusal"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "the fallback said something"; }

# (2) new files under a watching dtrace -Z
DSOCK="$T/helper.sock"
daemon_start "$T/daemon.log" "$HELPERD" -f --debug --socket "$DSOCK" --linger 0
at_exit "daemon_stop TERM 30"
export USDTKIT_HELPER_SOCKET="$DSOCK"
USDTKIT_UPROBE_MULTI=refused USDTKIT_ENGINE_TIMES=1 timeout 100 "$DTRACE" -Z -q -n "BEGIN { printf(\"ready\\n\"); }
$P*:::tick { printf(\"%s %s %d\\n\", probemod, probename, arg0); }" >"$T/out" 2>"$T/err" &
DT=$!
at_exit "kill $DT 2>/dev/null"
wait_until 40 "dtrace to start" grep -q ready "$T/out"
grep -q "pid [0-9]* watches new files" "$T/daemon.log" || fail "dtrace does not watch the daemon"
for n in 1 2; do
	cp "$T/b/once" "$T/b/once$n"
	# (a first answer awaited 5 s too: at load 26 the daemon, sanitized, once
	# read a REGISTER after drti's 100 ms, and the program went on unheld)
	USDTKIT_HELPER_TIMEOUT_MS=5000 USDTKIT_HELPER_HOLD_MS=5000 "$T/b/once$n" ||
		fail "the program failed"
done
poll_until 10 grep -q "^once2 tick 7$" "$T/out" || true
kill -INT "$DT"
rc=0
wait "$DT" || rc=$?
[ "$rc" = 0 ] || { cat "$T/out" "$T/err" >&2; fail "dtrace exited $rc"; }
same "$T/out" "ready\nonce1 tick 7\nonce2 tick 7\n\n" "each new file's one firing"
[ "$(grep -c "multi-uprobe link refused" "$T/err")" = 1 ] ||
	{ cat "$T/err" >&2; fail "not one fallback for the run"; }
exit 0
