#!/bin/bash
# The in-tree examples (quickstart, shared-library, cxx) built with the exact
# commands their READMEs give, with the tools of this build, with gcc and with
# clang; then run, and their probes checked in readelf (names, argument
# counts from the .d files), dtrace -l -p, gdb ($_probe_argN against the
# values the sources pass) and bpftrace (firings with the right values,
# _ENABLED()-guarded probes included).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
need_bpftrace
command -v gdb >/dev/null || fail "gdb is not installed (scripts/deps.sh installs it)"

export USDTKIT="$USDTKIT_SRCDIR" DTRACE SDT_CFLAGS="-I$USDTKIT_SRCDIR/include"
# SDT_CFLAGS is split on blanks, as CFLAGS is: from a checkout whose path
# has one, the -I goes through a response file, as examples/README.md says.
case $USDTKIT_SRCDIR in *[[:space:]]*)
	printf -- '-I"%s/include"\n' "$USDTKIT_SRCDIR" >"$T/sdt.rsp"
	SDT_CFLAGS="@$T/sdt.rsp"
	;;
esac
# No helper daemon here: programs must run (silently) without one.
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"

# The probes (provider, name, argument count) a .d declares, sorted: the
# expectation for readelf, derived from the provider file, not from output.
declared() { # file.d
	local prov
	prov=$(sed -n 's/^provider \([a-z_0-9]*\).*/\1/p' "$1")
	sed -n 's/^[[:space:]]*probe \([a-z_0-9]*\)(\(.*\));.*/\1 \2/p' "$1" | while read -r name args; do
		echo "$prov $name $(echo "$args" | tr ',' '\n' | grep -c .)"
	done | sort -u
}
# The probes readelf shows in a file: provider, name, argument count.
noted() { # file
	readelf -n "$1" | awk '
		/Provider:/ { p = $2 } /Name:/ { n = $2 }
		/Arguments:/ { $1 = ""; print p, n, NF - 1 }' | sort -u
}

# Runs a program in the background until dtrace -l -p lists the expected
# lines (module, function-agnostic, names with -), then stops it.
check_list() { # what expected-names module program args...
	local what=$1 names=$2 module=$3 pid i
	shift 3
	"$@" >"$T/bg.out" 2>&1 &
	pid=$!
	for i in $(seq 250); do
		"$DTRACE" -l -p "$pid" >"$T/list" 2>&1 || true
		[ "$(grep -c " $module " "$T/list")" -ge "$(echo "$names" | wc -w)" ] && break
		sleep 0.02
	done
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	for n in $names; do
		grep -qE "^ +[0-9]+ +[a-z]+$pid +$module +[^ ]* $n\$" "$T/list" ||
			{ cat "$T/list" >&2; fail "$what: dtrace -l -p has no probe $n in $module"; }
	done
}

for cc in $COMPILERS; do
	PATH="$(compiler_shims "$cc"):$PATH"

	# --- quickstart: the C program ---
	d="$T/$cc/quickstart"
	mkdir -p "$d" && cd "$d"
	run_readme_block "$EXAMPLES/quickstart/README.md" "build quickstart"
	expect_eq "$(noted quickstart)" "$(declared "$EXAMPLES/quickstart/quickstart.d")" \
		"$cc quickstart: probes in readelf vs quickstart.d"
	./quickstart 2 0 >out
	expect_eq "$(cat out)" "served 2 requests" "$cc quickstart: runs without a daemon"
	check_list "$cc quickstart" "request-start request-done request-summary" quickstart \
		./quickstart 50 100
	# Request 1: path paths[1 % 3] + "?id=1" (quickstart.c's table).
	gdb_probe quickstart:request__start '2 0' ./quickstart '$_probe_arg0' '(char *)$_probe_arg1' >gdb.out
	expect_grep '^argc=2$' gdb.out "$cc quickstart: gdb argc"
	expect_grep '^1$' gdb.out "$cc quickstart: gdb id"
	expect_grep '"/api/users\?id=1"$' gdb.out "$cc quickstart: gdb path"
	bpftrace -c './quickstart 4 0' -e '
usdt:./quickstart:quickstart:request__start { printf("start %d %s\n", arg0, str(arg1)); }
usdt:./quickstart:quickstart:request__done { printf("done %d %d\n", arg0, arg1); }
usdt:./quickstart:quickstart:request__summary { printf("summary %s\n", str(arg0)); }' >bt.out 2>&1 ||
		{ cat bt.out >&2; fail "$cc quickstart: bpftrace failed"; }
	paths=(/index.html /api/users /static/app.js)
	for id in 1 2 3 4; do
		p="${paths[id % 3]}?id=$id"
		st=$([ $((id % 4)) -ne 0 ] && echo 200 || echo 404)
		expect_grep "^start $id ${p//\?/\\?}\$" bt.out "$cc quickstart: bpftrace start $id"
		expect_grep "^done $id $st\$" bt.out "$cc quickstart: bpftrace done $id"
		# Fires only because bpftrace's attach raised its semaphore.
		expect_grep "^summary request $id ${p//\?/\\?} -> $st\$" bt.out \
			"$cc quickstart: the _ENABLED()-guarded summary $id"
	done

	# --- shared-library: a dlopen'd library with its own provider ---
	d="$T/$cc/shared-library"
	mkdir -p "$d" && cd "$d"
	run_readme_block "$EXAMPLES/shared-library/README.md" "build shared-library"
	expect_eq "$(noted libplugin.so)" "$(declared "$EXAMPLES/shared-library/plugin.d")" \
		"$cc shared-library: probes in libplugin.so vs plugin.d"
	expect_eq "$(noted host)" "" "$cc shared-library: the host has no probes"
	check_list "$cc shared-library" "loaded item batch-digest" libplugin.so \
		./host ./libplugin.so 100 50
	# The library is not loaded when bpftrace attaches: it attaches to the file.
	words="red green blue"
	bt_start bt.out "
usdt:$d/libplugin.so:plugin:loaded { printf(\"loaded %s %d\n\", str(arg0), arg1); }
usdt:$d/libplugin.so:plugin:item { printf(\"item %d %s %d\n\", arg1, str(arg0), arg2); }
usdt:$d/libplugin.so:plugin:batch__digest { printf(\"digest %s\n\", str(arg0)); }"
	./host ./libplugin.so 2 0 $words >out
	# (3 items and a digest per round, 2 rounds)
	bt_stop '^(item|digest) ' 8
	expect_grep '^loaded example-plugin 3$' bt.out "$cc shared-library: loaded"
	# cost_of() and the digest, computed here from plugin.c's definitions.
	python3 - $words >expect <<'EOF'
import sys
total = 0
for i, w in enumerate(sys.argv[1:]):
    c = 0
    for ch in w.encode():
        c = (c * 31 + ch) % (1 << 64)
    c %= 1000
    total += c
    print("item %d %s %d" % (i, w, c))
print("digest %08lx-%d" % (total * 2654435761 % 0xffffffff, len(sys.argv) - 1))
EOF
	while read -r line; do
		expect_eq "$(grep -cxF "$line" bt.out)" 2 "$cc shared-library: '$line' once per round"
	done <expect
	gdb_probe plugin:item './libplugin.so 1 0 red' ./host '(char *)$_probe_arg0' '$_probe_arg1' \
		'$_probe_arg2' >gdb.out
	expect_grep '^argc=3$' gdb.out "$cc shared-library: gdb argc"
	expect_grep '"red"$' gdb.out "$cc shared-library: gdb name"
	expect_grep "^$(sed -n 's/^item 0 red //p' expect)\$" gdb.out "$cc shared-library: gdb cost"

	# --- cxx: the C++ program ---
	d="$T/$cc/cxx"
	mkdir -p "$d" && cd "$d"
	run_readme_block "$EXAMPLES/cxx/README.md" "build cxx"
	expect_eq "$(noted shop)" "$(declared "$EXAMPLES/cxx/shop.d")" "$cc cxx: probes vs shop.d"
	# Two instances of the template cart::add<It>, hence two sites.
	expect_eq "$(gdb -nx -batch -ex 'info probes' ./shop | grep -c ' cart__add ')" 2 \
		"$cc cxx: one cart__add site per template instance"
	check_list "$cc cxx" "order-placed cart-add cart-clear" shop ./shop 100 50
	bpftrace -c './shop 3 0' -e '
usdt:./shop:shop:order__placed { printf("order %s %d %lld\n", str(arg0), arg1, arg2); }
usdt:./shop:shop:cart__add { printf("add %d %d\n", arg0, arg1); }
usdt:./shop:shop:cart__clear { printf("clear %d\n", arg0); }' >bt.out 2>&1 ||
		{ cat bt.out >&2; fail "$cc cxx: bpftrace failed"; }
	# Order n: catalogue[0 .. n % 3] and then catalogue[0] again (shop.cc).
	sku=(101 202 303) cents=(250 1999 5) who=(ada grace linus)
	for n in 0 1 2; do
		items=$((n % 3 + 2)) sum=250
		for ((k = 0; k <= n % 3; k++)); do sum=$((sum + cents[k])); done
		expect_grep "^order ${who[n]} $items $sum\$" bt.out "$cc cxx: order $n"
	done
	expect_eq "$(grep -c '^add 101 250$' bt.out)" 6 "$cc cxx: adds of sku 101"
	expect_eq "$(grep -c '^add 202 1999$' bt.out)" 2 "$cc cxx: adds of sku 202"
	expect_eq "$(grep -c '^add 303 5$' bt.out)" 1 "$cc cxx: adds of sku 303"
	expect_eq "$(grep '^clear' bt.out | tr '\n' ' ')" "clear 2 clear 3 clear 4 " "$cc cxx: clears"
	cd "$T"
done
echo "examples built from their READMEs and traced with gcc and clang"
