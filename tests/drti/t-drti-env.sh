#!/bin/bash
# The environment switches: USDTKIT_DISABLE (set, non-empty, not "0") and
# DTRACE_DOF_INIT_DISABLE (set at all, even empty) send nothing at all, not
# even from fork children or dlopen'ed libraries; USDTKIT_DEBUG=1 and
# DTRACE_DOF_INIT_DEBUG=1 print exactly one line per action on stderr and
# nothing else, addresses matching what the server received; without them
# nothing is printed.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"
build_progs gcc
cmds=(errno fds probe dlopen "$LIB" dlclose fork probe \; fds)
run_prog "$T/base.out" "$T/base.err" USDTKIT_DISABLE=1 -- "${cmds[@]}" || fail "baseline failed"
start_fake reply

for v in USDTKIT_DISABLE=1 USDTKIT_DISABLE=yes DTRACE_DOF_INIT_DISABLE=1 DTRACE_DOF_INIT_DISABLE= \
	DTRACE_DOF_INIT_DISABLE=0; do
	run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" "$v" -- "${cmds[@]}" || fail "$v: failed"
	cmp -s "$T/base.out" "$T/out" || fail "$v: stdout differs"
	[ ! -s "$T/err" ] || fail "$v: printed on stderr"
	run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" "$v" USDTKIT_DEBUG=1 -- "${cmds[@]}" ||
		fail "$v: failed with debug"
	# one line per module loaded (program, library); fork children say nothing
	expect_eq "$(grep -c '^usdtkit drti: registration disabled by the environment$' "$T/err")" 2 \
		"$v: 'disabled' debug lines"
	expect_eq "$(wc -l <"$T/err")" 2 "$v: debug lines in all"
done
sleep 0.1
expect_eq "$(nmsgs)" 0 "messages received while disabled"
echo "ok: disabled: nothing sent, silent (debug: one line per module)"

for v in USDTKIT_DISABLE=0 USDTKIT_DISABLE= DTRACE_DOF_INIT_DISABLEX=1; do
	n0=$(nmsgs)
	run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" "$v" -- say x || fail "$v: failed"
	wait_msgs $((n0 + 1)) || fail "$v: registration did not happen"
done
echo "ok: USDTKIT_DISABLE=0, empty USDTKIT_DISABLE and look-alike names do not disable"

# Debug: exactly these lines, in the order of the actions (program load,
# dlopen, dlclose); a fork child and the exit send nothing and say nothing.
for dbg in USDTKIT_DEBUG=1 DTRACE_DOF_INIT_DEBUG=1; do
	stop_fake
	start_fake reply 3
	rm -f "$T/pids"
	run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" "$dbg" -- pid "$T/pids" dlopen "$LIB" \
		dlclose fork pid "$T/pids" \; || fail "$dbg: failed"
	cat "$T/err"
	wait_msgs 3 || true
	mapfile -t pids < <(sed -n 's/^pid //p' "$T/pids")
	A=$(msgs | sed -n 1p | sed 's/.*addr=//')
	L=$(msgs | sed -n 2p | sed 's/.*addr=//')
	# the debug line prints the address zero-padded to the pointer's width
	pad() { printf '0x%016x' "$1"; }
	{
		echo "usdtkit drti: register module, metadata note at $(pad "$A"): done, 3 probes"
		echo "usdtkit drti: register module, metadata note at $(pad "$L"): done, 3 probes"
		echo "usdtkit drti: unregister at dlclose, metadata note at $(pad "$L"): done, 3 probes"
	} >"$T/want"
	diff "$T/want" "$T/err" >&2 || fail "$dbg: debug lines differ from the expected ones"
	run_prog "$T/out0" "$T/err0" USDTKIT_DISABLE=1 -- pid "$T/pids0" dlopen "$LIB" dlclose \
		fork pid "$T/pids0" \; || fail "$dbg: baseline failed"
	cmp -s "$T/out" "$T/out0" || { diff "$T/out0" "$T/out" >&2; fail "$dbg: stdout changed by debugging"; }
done
echo "ok: debug: one line per action, exactly"

# Debug with no daemon: one line per action, naming the socket and the error.
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$T/none.sock" USDTKIT_DEBUG=1 -- dlopen "$LIB" || fail
expect_eq "$(wc -l <"$T/err")" 2 "no-daemon debug lines"
expect_eq "$(grep -c "^usdtkit drti: register module, metadata note at 0x[0-9a-f]*: no helper socket: ENOENT ($T/none.sock)\$" "$T/err")" 2 \
	"no-daemon debug line form"
# a socket file nobody listens on
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])' "$T/stale.sock"
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$T/stale.sock" USDTKIT_DEBUG=1 -- say x || fail
expect_eq "$(cat "$T/err")" "$(printf 'usdtkit drti: register module, metadata note at %s: connect: ECONNREFUSED (%s)' \
	"$(sed -n 's/.*note at \(0x[0-9a-f]*\):.*/\1/p' "$T/err")" "$T/stale.sock")" "stale socket debug line"
# a refusal is reported with the daemon's errno
stop_fake
start_fake refuse
run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_DEBUG=1 -- say x || fail
expect_grep '^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: refused by the helper: EPERM$' "$T/err" \
	"refusal debug line"
# nothing follows a refused REGISTER at exit (exit sends nothing at all)
wait_msgs 1 || fail "no REGISTER"
sleep 0.2
expect_eq "$(nmsgs)" 1 "messages after a refused REGISTER (none at exit)"
echo "ok: debug: failure lines"

# A set-user-ID program ignores the socket, timeout and debug variables of
# its caller (they would hand the caller the module's load address); the
# same program without the set-user-ID bit honours them (the control).
command -v setpriv >/dev/null || fail "setpriv (util-linux) is not installed"
[ "$(id -u)" -eq 0 ] || skip "the set-user-ID check needs root"
S=$(mktemp -d /tmp/usdtkit-suid.XXXXXX)
at_exit "rm -rf '$S'"
chmod 755 "$S"
cp "$PROG" "$S/prog-suid"
cp "$PROG" "$S/prog-plain"
chmod 4755 "$S/prog-suid"
chmod 755 "$S/prog-plain"
stop_fake
SOCK="$S/helper.sock" # reachable by nobody, as a system daemon's socket is
start_fake reply
chmod 666 "$SOCK"
# (in a private namespace: the set-user-ID program talks to the default
# path, which must be empty there, not a daemon of this machine's)
as_nobody() { # prog
	"$USDTKIT_SRCDIR/tests/lib/private-run.sh" setpriv --reuid=65534 --regid=65534 --clear-groups env -u USDTKIT_DISABLE \
		USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=3000 USDTKIT_DEBUG=1 "$1" say x
}
as_nobody "$S/prog-plain" >"$T/out" 2>"$T/err" || fail "the plain program failed as nobody"
expect_grep '^usdtkit drti: register module, metadata note at 0x[0-9a-f]+: ' "$T/err" "control: debug line"
wait_msgs 1 || fail "control: the plain program sent nothing to the socket it was given"
n0=$(nmsgs)
as_nobody "$S/prog-suid" >"$T/out" 2>"$T/err" || fail "the set-user-ID program failed as nobody"
expect_eq "$(cat "$T/out")" "main says x" "set-user-ID program output"
[ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "the set-user-ID program printed drti's debug line"; }
sleep 0.2
expect_eq "$(nmsgs)" "$n0" "messages from the set-user-ID program to the caller's socket"
echo "ok: a set-user-ID program ignores the caller's socket, timeout and debug variables"
