#!/bin/bash
# A program built with clang's MemorySanitizer (-fsanitize=memory) and its
# -G objects from `CC=clang CFLAGS=-fsanitize=memory dtrace -G`: drti is
# compiled with MSan too (dtrace -G keeps -fsanitize=memory: MSan wants
# every object instrumented; checked with nm), and on every path drti takes
# (tests/checkers/lib.sh), with fork, dlopen and dlclose, MSan reports
# nothing and the output is the one with registration off. Before drti
# zeroed PROCMAP_QUERY's name buffer, MSan (which decodes the unknown ioctl
# from its number and marks only the 104-byte query written) reported
# use-of-uninitialized-value in usdt_board_path_hash wherever a socket file
# existed. The library runtime (libusdtkit-runtime) is not run under MSan:
# MSan needs every library instrumented, libelf included; ThreadSanitizer
# and valgrind cover it (t-checkers-tsan, t-checkers-memcheck).
[ -n "${USDTKIT_IN_PRIVATE_RUN:-}" ] || exec "$USDTKIT_SRCDIR/tests/lib/private-run.sh" bash "$0" "$@"
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/checkers/lib.sh"
command -v clang >/dev/null || fail "clang is not installed (scripts/deps.sh installs it)"

export MSAN_OPTIONS="halt_on_error=1:exitcode=23:log_path=$T/msan"
build_progs clang -fsanitize=memory -fsanitize-memory-track-origins -fno-omit-frame-pointer -g
for o in app-prov.o lib-prov.o; do
	nm "$B/$o" | grep -q '__msan_' || fail "$o: drti is not built with MemorySanitizer (nm shows no __msan_ call)"
done
echo "ok: drti in both -G objects is built with MemorySanitizer"
baseline
[ -z "$(ls "$T" | grep '^msan')" ] || { cat "$T"/msan* >&2; fail "an MSan report with registration off"; }

msan() { # LABEL VAR=VALUE...
	local label=$1 st=0
	shift
	mapfile -t _cmds < <(cmds)
	drti_env "$@" -- "$PROG" "${_cmds[@]}" >"$T/$label.out" 2>"$T/$label.err" || st=$?
	if ls "$T" | grep -q '^msan'; then
		cat "$T"/msan* >&2
		fail "$label: MemorySanitizer reported (above)"
	fi
	[ "$st" -eq 0 ] || { cat "$T/$label.err" >&2; fail "$label: exit status $st"; }
	check_same "$label" "$T/$label.out" "$T/$label.err"
	echo "ok: $label: no MemorySanitizer report"
}

every_path msan
exit 0
