#!/bin/bash
# ThreadSanitizer (clang -fsanitize=thread):
#   1. a program and its -G objects built with it (`CC=clang
#      CFLAGS=-fsanitize=thread dtrace -G` keeps the option: drti is
#      instrumented, checked with nm), on every path drti takes
#      (tests/checkers/lib.sh) with fork, dlopen and dlclose: no report, the
#      output of a run with registration off;
#   2. libusdtkit-runtime built with it (its sources and the core's, compiled
#      here as meson compiles them, listed by tests/checkers/meson.build) and
#      rtprog's threads mode: four threads firing a probe while the main
#      thread loads and unloads its provider 100 times, with a live private
#      daemon registering and unregistering each load (and, once, with none):
#      no data race, every fire either fired or refused with ESRCH.
[ -n "${USDTKIT_IN_PRIVATE_RUN:-}" ] || exec "$USDTKIT_SRCDIR/tests/lib/private-run.sh" bash "$0" "$@"
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/checkers/lib.sh"
command -v clang >/dev/null || fail "clang is not installed (scripts/deps.sh installs it)"
export TSAN_OPTIONS="halt_on_error=1:exitcode=23:log_path=$T/tsan"
tsan_reports() { ls "$T" | grep -q '^tsan'; }
show_fail() { cat "$T"/tsan* >&2 2>/dev/null; fail "$*"; }

# 1. drti in a TSan program.
build_progs clang -fsanitize=thread -fno-omit-frame-pointer -g
for o in app-prov.o lib-prov.o; do
	nm "$B/$o" | grep -q '__tsan_' || fail "$o: drti is not built with ThreadSanitizer (nm shows no __tsan_ call)"
done
echo "ok: drti in both -G objects is built with ThreadSanitizer"
baseline
! tsan_reports || show_fail "a TSan report with registration off"

tsan() { # LABEL VAR=VALUE...
	local label=$1 st=0
	shift
	mapfile -t _cmds < <(cmds)
	drti_env "$@" -- "$PROG" "${_cmds[@]}" >"$T/$label.out" 2>"$T/$label.err" || st=$?
	! tsan_reports || show_fail "$label: ThreadSanitizer reported (above)"
	[ "$st" -eq 0 ] || { cat "$T/$label.err" >&2; fail "$label: exit status $st"; }
	check_same "$label" "$T/$label.out" "$T/$label.err"
	echo "ok: $label: no ThreadSanitizer report"
}
every_path tsan

# 2. The runtime library, with its drti, built with TSan; rtprog with it.
S=$USDTKIT_SRCDIR
R="$T/rt-tsan"
mkdir -p "$R"
CF=(-fsanitize=thread -fno-omit-frame-pointer -g -O1 -std=c11 -D_GNU_SOURCE -DUSDTKIT_HAVE_HELPER=1
	-I"$S/runtime" -I"$S/core" -I"$S/kernel-helper/drti" -I"$S/include")
case $(uname -m) in x86_64 | aarch64) CF+=(-DUSDT_RT_FIRE_ASM=1) ;; esac
objs=()
for f in "$@"; do
	case $f in
	*/fire-"$(uname -m)".S | *.c) ;;
	*) continue ;;
	esac
	o="$R/$(basename "$f").o"
	extra=()
	[[ $f == */drti.c ]] && extra=(-DUSDT_DRTI_LIBRARY=1)
	clang "${CF[@]}" "${extra[@]}" -c "$f" -o "$o" || fail "clang -fsanitize=thread: cannot compile $f"
	objs+=("$o")
done
[ "${#objs[@]}" -ge 5 ] || fail "no runtime sources given (tests/checkers/meson.build passes them)"
clang "${CF[@]}" -c "$S/tests/runtime/rtprog.c" -o "$R/rtprog.o" || fail "cannot compile rtprog.c"
clang -fsanitize=thread "$R/rtprog.o" "${objs[@]}" -lelf -lpthread -ldl -o "$R/rtprog" ||
	fail "cannot link rtprog with ThreadSanitizer"
nm "$R/rtprog" | grep -q 'usdt_drti_lib_register' || fail "rtprog-tsan has no drti"

threads() { # LABEL VAR=VALUE...
	local label=$1 st=0
	shift
	drti_env RTPROG_NAME="${P}th" "$@" -- "$R/rtprog" threads 100 >"$T/th.$label.out" 2>"$T/th.$label.err" || st=$?
	! tsan_reports || show_fail "runtime threads, $label: ThreadSanitizer reported (above)"
	[ "$st" -eq 0 ] || { cat "$T/th.$label.out" "$T/th.$label.err" >&2; fail "runtime threads, $label: exit status $st"; }
	expect_grep '^threads ok: 100 loads$' "$T/th.$label.out" "runtime threads, $label"
	echo "ok: runtime threads firing during 100 loads and unloads, $label: no ThreadSanitizer report"
}
threads nodaemon USDTKIT_HELPER_SOCKET="$T/absent.sock"
need_tracefs
_ck_daemon "$T/d.sock"
threads daemon USDTKIT_HELPER_SOCKET="$T/d.sock" USDTKIT_HELPER_TIMEOUT_MS=5000
grep -qE "unregistered .*memfd|unregistered " "$T/daemon.log" || { cat "$T/daemon.log" >&2; fail "the daemon saw no unregistration"; }
_ck_daemon_stop "$T/d.sock"
exit 0
