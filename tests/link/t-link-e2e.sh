#!/bin/bash
# dtrace -G end to end: an executable, a linked shared library and a dlopen'd
# plugin, each with its own -G object (the library and the plugin share one
# provider), built as C and as C++ with gcc and with clang. Each program runs;
# bpftrace attaches to the semaphore-guarded probes and the program must see
# _ENABLED() become true while attached and false again after. The input
# objects must be byte-identical after -G.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
need_bpftrace
E2E="$USDTKIT_SRCDIR/tests/link/e2e"

# Waits up to $2 seconds for the state file $1 to read exactly $3.
wait_state() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(cat "$1" 2>/dev/null)" = "$3" ] && return 0
		sleep 0.1
	done
	echo "state is '$(cat "$1" 2>/dev/null)', expected '$3'" >&2
	return 1
}

APP_PID=""
BT_PID=""
at_exit 'stop_bg "$APP_PID" TERM 5; stop_bg "$BT_PID" TERM 5'

# Runs bpftrace on the given attach points until the state reads $2, then
# stops it and checks each attach point counted hits.
trace_until() { # dir expected-state probe...
	local d=$1 want=$2
	shift 2
	local probes
	probes=$(IFS=,; echo "$*")
	bpftrace -e "$probes { @[probe] = count(); }" >"$d/bt.out" 2>&1 &
	BT_PID=$!
	wait_state "$d/state" 30 "$want" || { cat "$d/bt.out" >&2; fail "$d: _ENABLED() did not flip on attach"; }
	stop_bg "$BT_PID" TERM
	BT_PID=""
	for p in "$@"; do
		grep -qF "@[$p]:" "$d/bt.out" || { cat "$d/bt.out" >&2; fail "$d: no hits counted for $p"; }
	done
	wait_state "$d/state" 10 "app=0 lib=0 plugin=0" || fail "$d: _ENABLED() still true after bpftrace exited"
}

run_combo() { # lang compiler
	local lang=$1 comp=$2 d="$T/${1/++/xx}-$2" cc ext
	mkdir -p "$d"
	cd "$d"
	cp "$E2E/app.d" "$E2E/shared.d" .
	"$DTRACE" -h -s app.d -o app.h
	"$DTRACE" -h -s shared.d -o shared.h
	if [ "$lang" = c ]; then
		cc=$comp ext=c
	else
		cc=$([ "$comp" = gcc ] && echo g++ || echo clang++) ext=cc
	fi
	cp "$E2E/app.c" "app.$ext"
	cp "$E2E/lib.c" "lib.$ext"
	cp "$E2E/lib.c" "plugin.$ext"
	$cc -I"$SDT_INC" -I. -O2 -fPIC -c "app.$ext" -o app.o
	$cc -I"$SDT_INC" -I. -O2 -fPIC -DPOLL_FN=lib_poll -c "lib.$ext" -o lib.o
	$cc -I"$SDT_INC" -I. -O2 -fPIC -DPOLL_FN=plugin_poll -c "plugin.$ext" -o plugin.o
	sha256sum app.o lib.o plugin.o >sums
	CC=$comp "$DTRACE" -G -s app.d -o app-prov.o app.o
	CC=$comp "$DTRACE" -G -s shared.d -o lib-prov.o lib.o
	CC=$comp "$DTRACE" -G -s shared.d -o plugin-prov.o plugin.o
	sha256sum -c --quiet sums || fail "$d: -G modified an input object"
	$cc -shared lib.o lib-prov.o -o libe2e.so
	$cc -shared plugin.o plugin-prov.o -o plugin.so
	$cc -pie app.o app-prov.o -L. -le2e -Wl,-rpath,"$d" -ldl -o app
	./app "$d/state" "$d/stop" "$d/plugin.so" 2>"$d/app.err" &
	APP_PID=$!
	wait_state "$d/state" 10 "app=0 lib=0 plugin=0" || fail "$d: program did not start cleanly"
	if [ "$lang-$comp" = c-gcc ]; then
		# Per-DSO semaphores: attaching to the library's probe flips only it,
		# not the plugin's copy of the same provider nor the executable's.
		trace_until "$d" "app=0 lib=1 plugin=0" "usdt:$d/libe2e.so:e2eshared:work"
	fi
	trace_until "$d" "app=1 lib=1 plugin=1" "usdt:$d/app:e2eapp:tick" \
		"usdt:$d/libe2e.so:e2eshared:work" "usdt:$d/plugin.so:e2eshared:work"
	touch "$d/stop"
	wait $APP_PID || fail "$d: program failed"
	APP_PID=""
	[ ! -s "$d/app.err" ] || { cat "$d/app.err" >&2; fail "$d: the program printed to stderr"; }
	echo "ok: $lang $comp"
}

for lang in c c++; do
	for comp in $COMPILERS; do
		run_combo "$lang" "$comp"
	done
done
