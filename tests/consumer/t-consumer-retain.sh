#!/bin/bash
# Retained enablings: a script started before the file its probes are in.
# A private helper daemon registers (1) a new program, (2) a library the
# program dlopen()s, (3) a Python runtime provider; each is traced (new
# links to the loaded programs, one set of maps), its records printed as
# they come. Each program waits until its
# probe is enabled (a tracer attached), then fires three times: the output
# is exact. The first runs also from a file known at the start, so that the
# dump holds both files' counts in one aggregation. (4) Without a daemon, a -c process's
# dlopen() is seen in its /proc/PID/maps; (5) the same with two clauses.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/consumer/lib.sh"
. "$USDTKIT_SRCDIR/tests/lib/daemon.sh"
need_engine
command -v taskset >/dev/null || fail "taskset is not installed (util-linux)"
command -v cc >/dev/null || fail "no C compiler"

P=dtrt$(tr -dc a-z </dev/urandom | head -c 6)
mkdir -p "$T/b"
cat >"$T/b/p.d" <<EOF
provider $P { probe tick(int n, char *what); };
EOF
# A program (and with an argument, a library it dlopen()s) that waits until
# its probe is enabled, then fires it three times.
cat >"$T/b/fire.c" <<EOF
#include <unistd.h>
#include "p.h"
static const char *const what[] = {"one", "two", "three"};
void fire(void)
{
	int i;

	for (i = 0; i < 6000 && !${P^^}_TICK_ENABLED(); i++)
		usleep(5000);
	for (i = 0; i < 3; i++)
		${P^^}_TICK(i + 1, (char *)what[i]);
}
EOF
cat >"$T/b/main.c" <<EOF
void fire(void);
int main(void)
{
	fire();
	return 0;
}
EOF
cat >"$T/b/loader.c" <<EOF
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	void (*f)(void);

	if (!h || !(f = (void (*)(void))dlsym(h, "fire"))) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	f();
	return 0;
}
EOF
(
	cd "$T/b" || exit 1
	"$DTRACE" -h -s p.d -o p.h &&
		cc -O2 -fPIC -I"$SDT_INC" -I. -c fire.c -o fire.o &&
		"$DTRACE" -G -s p.d -o p.o fire.o &&
		cc -o prog main.c fire.o p.o &&
		cc -shared -o libfire.so fire.o p.o &&
		cc -o loader loader.c -ldl
) || fail "building the test programs"

DSOCK="$T/helper.sock"
daemon_start "$T/daemon.log" "$HELPERD" -f --socket "$DSOCK" --linger 0
at_exit "daemon_stop TERM 30"
export USDTKIT_HELPER_SOCKET="$DSOCK"

# dtrace in the background, until it printed "ready" (BEGIN: tracing).
dt_bg() {
	taskset -c 0 timeout 100 "$DTRACE" "$@" >"$T/out" 2>"$T/err" &
	DT=$!
	at_exit "kill $DT 2>/dev/null"
	wait_until 40 "dtrace to start" grep -q ready "$T/out"
}
dt_wait() { # WHAT
	local rc=0
	wait "$DT" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/out" "$T/err" >&2; fail "$1: dtrace exited $rc"; }
}
SCRIPT="BEGIN { printf(\"ready\\n\"); }
$P*:::tick { printf(\"%s %s %d %s\\n\", probemod, probename, arg0, copyinstr(arg1)); @[probename] = count(); }"
dump() { printf '\n  %-50s %16d\n' tick "$1"; }

# 1. A program registered after the start, and one of a file known at the
# start (run before it and again after it): one dump, and a printa() from
# the known file's clause that shows the new file's counts too (one set of
# maps). Ctrl-C ends it.
cp "$T/b/prog" "$T/b/known"
"$T/b/known" &
K=$!
wait_until 20 "the daemon to register $K" bash -c "'$DTRACE' -l -n '$P$K:::tick' >/dev/null 2>&1"
dt_bg -Z -q -n "$SCRIPT $P*:::tick { @r[probemod] = count(); }
$P*:::tick /probemod == \"known\" && arg0 == 3/ { printa(\"r %s %@d\\n\", @r); }"
wait "$K" || fail "the known program failed"
"$T/b/prog" || fail "the new program failed"
sleep 1 # the records are read as they come; a loaded machine may lag
"$T/b/known" || fail "the known program failed (again)"
sleep 1
kill -INT "$DT"
dt_wait "a new program"
K3="known tick 1 one\nknown tick 2 two\nknown tick 3 three\n"
same "$T/out" "ready\n${K3}r known 3\nprog tick 1 one\nprog tick 2 two\nprog tick 3 three\n${K3}r prog 3\nr known 6\n$(dump 9)\n" \
	"a new program traced, its counts added to a printa() and to the dump"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "-q wrote to stderr"; }

# 2. A library a running program dlopen()s (the loader has no probes), then
# a runtime provider (the Python binding), both created after the start:
# the second one's exit() ends the run, with its status.
RTLIB="$USDTKIT_BUILDDIR/runtime/libusdtkit-runtime.so.0"
PY_ENV=()
if [ -n "${USDTKIT_SANITIZE:-}" ]; then
	PY_ENV=(env "LD_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so)" "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0")
fi
dt_bg -Z -q -n "$SCRIPT $P*:::tick /arg0 == 3 && probemod != \"libfire.so\"/ { exit(3); }"
"$T/b/loader" "$T/b/libfire.so" || fail "the loader failed"
USDTKIT_RUNTIME_LIB="$RTLIB" PYTHONPATH="$USDTKIT_SRCDIR/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
	"${PY_ENV[@]}" python3 -c "
import time, usdtkit
with usdtkit.Provider('$P', module='${P}mod') as p:
    t = p.add_probe('tick', 'int', 'string')
    p.load()
    for i in range(10000):
        if t.enabled:
            break
        time.sleep(0.005)
    for i, w in enumerate(('one', 'two', 'three')):
        t.fire(i + 1, w)
" || fail "the Python program failed"
rc=0
wait "$DT" || rc=$?
[ "$rc" = 3 ] || { cat "$T/out" "$T/err" >&2; fail "exit(3) in a clause on a later file: dtrace exited $rc"; }
M="memfd:usdtkit:${P}mod"
same "$T/out" "ready\nlibfire.so tick 1 one\nlibfire.so tick 2 two\nlibfire.so tick 3 three\n$M tick 1 one\n$M tick 2 two\n$M tick 3 three\n$(dump 6)\n" \
	"a dlopen()ed library and a runtime provider traced"
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "-q wrote to stderr"; }

# 4. No daemon: a -c process's dlopen()ed library, seen in its maps.
rc=0
USDTKIT_HELPER_SOCKET="$T/none.sock" taskset -c 0 timeout 100 "$DTRACE" -Z -q -c "$T/b/loader $T/b/libfire.so" \
	-n "$P*:::tick { printf(\"%s %s %d %s\\n\", probemod, probename, arg0, copyinstr(arg1)); @[probename] = count(); n++; }
	END { printf(\"n=%d\\n\", n); }" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || { cat "$T/out" "$T/err" >&2; fail "a -c process's dlopen without a daemon: dtrace exited $rc"; }
# (n: DTrace's 3: the globals are one set, whichever file a clause fired in)
N=3
same "$T/out" "libfire.so tick 1 one\nlibfire.so tick 2 two\nlibfire.so tick 3 three\nn=$N\n$(dump 3)\n" \
	"a -c process's dlopen()ed library, without a daemon"

# 5. Two clauses on a library that comes later, no probe at the start: on
# the engine, one link per clause to each clause's own program (no program
# has the pair), run in script order; probefunc and probeprov from the
# site.
rc=0
USDTKIT_HELPER_SOCKET="$T/none.sock" taskset -c 0 timeout 100 "$DTRACE" -Z -q -c "$T/b/loader $T/b/libfire.so" \
	-n "$P*:::tick { printf(\"a %d %s %s %d\\n\", arg0, probefunc, probeprov, pid); }
	$P*:::tick /arg0 > 1/ { printf(\"b %s\\n\", copyinstr(arg1)); }" >"$T/raw" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || { cat "$T/raw" "$T/err" >&2; fail "two clauses on a later library: dtrace exited $rc"; }
# (probeprov: the provider and the firing process's pid)
awk -v p="$P" '$1 == "a" { $4 = ($4 == p $5) ? "prov" : $4; $5 = "" } 1' "$T/raw" | sed 's/ $//' >"$T/out"
same "$T/out" "a 1 fire prov\na 2 fire prov\nb two\na 3 fire prov\nb three\n\n" \
	"two clauses on a later library, in script order"
