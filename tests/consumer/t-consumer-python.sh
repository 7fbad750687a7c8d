#!/bin/bash
# A Python program's runtime provider (bindings/python) traced by a D script
# with -p: the probe's declared types (a string, an int) type args[N], so
# args[0] is a string key and copyinstr(arg0) its text; the program waits
# until its probe is enabled, fires three times and exits, which ends the
# run (the exit dump). The whole output exact.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
need_engine
command -v python3 >/dev/null || fail "no python3 (scripts/deps.sh installs it)"

P=dtpy$(tr -dc a-z </dev/urandom | head -c 6)
PY_ENV=()
if [ -n "${USDTKIT_SANITIZE:-}" ]; then
	PY_ENV=(env "LD_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so)" "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0")
fi
# The program fires once its probe is enabled, and the semaphore is raised
# with each site's link, a moment before all are attached: on a loaded
# machine a firing can fall in between, not what this test checks.
# A run whose output lacks firings is tried again, three in all; a wrong
# line fails at once.
want="/a 1\n/b 2\n/a 3\n\n$(printf '  %-50s %16d\\n' /b 2 /a 4)"
for try in 1 2 3; do
	rm -f "$T/py"
	USDTKIT_RUNTIME_LIB="$USDTKIT_BUILDDIR/runtime/libusdtkit-runtime.so.0" \
		PYTHONPATH="$USDTKIT_SRCDIR/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
		"${PY_ENV[@]}" python3 -c "
import os, sys, time, usdtkit
with usdtkit.Provider('$P', module='${P}mod') as p:
    r = p.add_probe('request-start', 'string', 'int')
    p.load()
    print(os.getpid(), flush=True)
    for i in range(6000):
        if r.enabled:
            break
        time.sleep(0.005)
    for path, n in (('/a', 1), ('/b', 2), ('/a', 3)):
        r.fire(path, n)
" >"$T/py" 2>"$T/py.err" &
	PY=$!
	at_exit "kill $PY 2>/dev/null"
	wait_until 30 "the Python program to start" test -s "$T/py"
	pid=$(cat "$T/py")
	dt 0 -q -p "$pid" -n "$P\$target:::request-start { printf(\"%s %d\\n\", copyinstr(arg0), arg1); @[args[0]] = sum(args[1]); }"
	wait "$PY" || { cat "$T/py.err" >&2; fail "the Python program failed"; }
	[ -s "$T/err" ] && { cat "$T/err" >&2; fail "-q wrote to stderr"; }
	printf '%b' "$want" | cmp -s - "$T/out" && break
	grep -vxE '/[ab] [1-3]|| +/[ab] +[0-9]+' "$T/out" >&2 && same "$T/out" "$want" "a Python runtime provider under dtrace -p"
	echo "run $try: a firing before dtrace attached was not traced:" >&2
	cat "$T/out" >&2
	[ "$try" -lt 3 ] || same "$T/out" "$want" "a Python runtime provider under dtrace -p (three runs)"
done
exit 0
