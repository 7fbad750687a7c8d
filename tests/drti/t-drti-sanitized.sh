#!/bin/bash
# drti itself under AddressSanitizer and UndefinedBehaviorSanitizer. `dtrace
# -G` drops -fsanitize= from $CC $CFLAGS (drti must stay plain code in users'
# programs), so the sanitizer options come from a compiler wrapper it cannot
# see through: the -G objects' constructor is instrumented (checked with nm),
# and the program runs it against a stand-in daemon answering well, late, not
# at all, and with every malformed reply fakehelperd knows (truncated,
# oversized, wrong version, type, size or seq, a reply storm, a connection
# closed or shut down mid-request), at start, dlopen, dlclose, fork and exit.
# Each run must print exactly what a run with registration disabled prints,
# exit 0, and leave no sanitizer report. Runs in both test runs: the programs
# are instrumented either way.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"

SAN="$T/drti-san"
mkdir -p "$SAN"
cat >"$T/sancc" <<'EOF'
#!/bin/sh
exec clang -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer "$@"
EOF
chmod +x "$T/sancc"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:exitcode=23:log_path=$SAN/report"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=23:log_path=$SAN/report"

build_progs "$T/sancc"
for o in app-prov.o lib-prov.o; do
	nm "$B/$o" | grep -qE '__(asan|ubsan)_' || fail "$o: drti is not instrumented (nm shows no sanitizer call)"
done
echo "ok: drti in both -G objects is compiled with ASan and UBSan"

CMDS=(errno fds probe dlopen "$LIB" probe fork probe fds \; dlclose fds)
run_prog "$T/base.out" "$T/base.err" USDTKIT_DISABLE=1 -- "${CMDS[@]}" ||
	fail "baseline run failed"
[ -z "$(ls "$SAN")" ] || { cat "$SAN"/* >&2; fail "a sanitizer report with registration disabled"; }

n=0
for mode in reply refuse delay:50 noreply close garbage badmagic badseq big flood backlog \
	trunc:0 trunc:7 trunc:23 huge hugesize badversion badtype echo badsize otherseq:3 entry \
	storm closemid shutmid; do
	start_fake "$mode" 3
	rc=0
	run_prog "$T/out" "$T/err" USDTKIT_HELPER_SOCKET="$SOCK" USDTKIT_HELPER_TIMEOUT_MS=300 -- \
		"${CMDS[@]}" || rc=$?
	stop_fake
	if [ -n "$(ls "$SAN")" ]; then
		cat "$SAN"/* >&2
		fail "$mode: a sanitizer report (above)"
	fi
	[ "$rc" -eq 0 ] || { cat "$T/err" >&2; fail "$mode: the program exited $rc"; }
	cmp -s "$T/base.out" "$T/out" || { diff "$T/base.out" "$T/out" >&2; fail "$mode: stdout differs"; }
	[ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "$mode: the program printed to stderr"; }
	n=$((n + 1))
done
# The fake must have been talked to: the last mode's log has the requests.
expect_grep '^msg ' "$FLOG" "requests logged by the stand-in daemon"
echo "ok: $n daemon behaviours, no sanitizer report, output unchanged"
