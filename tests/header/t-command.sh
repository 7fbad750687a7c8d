#!/bin/bash
# The dtrace command line: usage errors exit 2, errors exit 1 and leave no
# output (an existing output file is kept as it was), default output names,
# -V, --help, -x handling, grouped flags, options after operands, and
# concurrent runs in one directory that neither collide nor leave temporary
# files behind.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
cd "$T"
mkdir sub
cp "$PROVIDERS/basic.d" sub/prov.d
printf 'provider broken {\n\tprobe x(int;\n};\n' >broken.d

# Two headers are the same but for the include guard built from their names.
same_header() {
	cmp -s <(sed -E 's/_(A|B|C|PROV)_H/_GUARD_H/g' "$1") <(sed -E 's/_(A|B|C|PROV)_H/_GUARD_H/g' "$2")
}

# run EXPECTED-RC CMD...: run, keep stdout/stderr in out/err, check the status.
run() {
	local want=$1 rc=0
	shift
	"$@" >out 2>err || rc=$?
	[ "$rc" = "$want" ] || { cat err >&2; fail "'$*' exited $rc, expected $want"; }
}

# Usage errors: exit 2, a message, no output.
run 2 "$DTRACE"
expect_grep 'error' err "no arguments"
run 2 "$DTRACE" -h
expect_grep '-s' err "no -s names the missing option"
run 2 "$DTRACE" -s sub/prov.d
run 2 "$DTRACE" -h -G -s sub/prov.d
run 2 "$DTRACE" -h -s
run 2 "$DTRACE" -h -y -s sub/prov.d
expect_grep "unknown option '-y'" err "an unknown option is named"
run 2 "$DTRACE" --bogus -h -s sub/prov.d
run 2 "$DTRACE" -l -h -s sub/prov.d
expect_grep '-l cannot be used with -h' err "-l with -h is a usage error"
run 2 "$DTRACE" -p 1
expect_grep 'only used with -l' err "-p without -l is a usage error"
run 2 "$DTRACE" -l -p 0
run 2 "$DTRACE" -h -s sub/prov.d -o a.h -o b.h
ls ./*.h 2>/dev/null && fail "a usage error left an output file"

# Help and version.
run 0 "$DTRACE" --help
expect_grep '^Usage: dtrace' out "--help prints the usage on stdout"
expect_grep '-G' out "--help lists -G"
run 0 "$DTRACE" -V
expect_grep '^dtrace: usdtkit [0-9]+\.[0-9]+' out "-V prints the version"

# Default output names: basename of the first .d, in the current directory.
run 0 "$DTRACE" -h -s sub/prov.d
[ -s prov.h ] || fail "-h without -o did not write ./prov.h"
[ -e sub/prov.h ] && fail "-h without -o wrote beside the .d instead of the current directory"
[ -s out ] && fail "-h wrote to stdout"
run 0 "$DTRACE" -G -s sub/prov.d
[ -s prov.o ] || fail "-G without -o did not write ./prov.o"
readelf -S prov.o | grep -q '\.probes' || fail "prov.o has no .probes section"
rm -f prov.h prov.o

# Accepted options: -32/-64, -Z, -k, -x nolibs (silently), -xnolibs, other -x (a warning),
# -fPIC, grouped flags, options after the object operands.
run 0 "$DTRACE" -64 -Z -x nolibs -xnolibs -h -s sub/prov.d -o a.h
[ -s err ] && { cat err >&2; fail "-x nolibs or -Z produced messages"; }
run 0 "$DTRACE" -x strip=yes -h -s sub/prov.d -o b.h
expect_grep 'warning: .*strip' err "an unknown -x option warns"
run 0 "$DTRACE" -Chs sub/prov.d -o c.h
same_header a.h c.h || fail "-Chs gives another header than -h -s"
same_header a.h b.h || fail "-x changed the header"
run 0 "$DTRACE" -32 -fPIC -G -o d.o -s sub/prov.d
[ -s d.o ] || fail "-32 -fPIC -G wrote no object"
gcc -c -o user.o -xc - <<<'int user(void) { return 1; }'
run 0 "$DTRACE" -G -s sub/prov.d user.o -o e.o
[ -s e.o ] || fail "an object operand before -o broke -G"

# Errors: exit 1, the message, and no output file; an existing one untouched.
run 1 "$DTRACE" -h -s missing.d -o m.h
expect_eq "$(cat err)" "dtrace: error: cannot open 'missing.d': No such file or directory" \
	"message for a missing input"
[ -e m.h ] && fail "a missing input left an output file"
echo "previous contents" >keep.h
run 1 "$DTRACE" -h -s broken.d -o keep.h
expect_grep '^broken\.d:2:[0-9]+: error' err "a syntax error is reported at file:line:col"
expect_eq "$(cat keep.h)" "previous contents" "an existing output after a failed run"
run 1 "$DTRACE" -h -s sub/prov.d -s missing.d -o keep.h
expect_eq "$(cat keep.h)" "previous contents" "an existing output after a missing second input"
run 1 "$DTRACE" -h -s sub/prov.d -o no/such/dir/x.h
expect_grep "cannot create 'no/such/dir/x.h'" err "an unwritable output is named"
cp broken.d broken-default.d
run 1 "$DTRACE" -h -s broken-default.d
[ -e broken-default.h ] && fail "a failed run left its default output"
run 1 "$DTRACE" -G -s broken.d -o broken.o
[ -e broken.o ] && fail "a failed -G left an output file"
# A successful run replaces an existing output.
run 0 "$DTRACE" -h -s sub/prov.d -o keep.h
grep -q 'BASIC_QUERY_START' keep.h || fail "a successful run did not replace the output"

# Concurrent runs in one directory: same inputs, same default output names,
# with and without -C; every run succeeds, the outputs are whole, and nothing
# else appears in the directory.
mkdir conc
cp sub/prov.d conc/
(
	cd conc
	pids=""
	for i in 1 2 3 4 5 6 7 8; do
		"$DTRACE" -h -s prov.d 2>"../conc-$i.err" &
		pids="$pids $!"
		"$DTRACE" -C -h -s prov.d -o prov-cpp.h 2>>"../conc-$i.err" &
		pids="$pids $!"
		"$DTRACE" -G -s prov.d 2>>"../conc-$i.err" &
		pids="$pids $!"
	done
	for p in $pids; do
		wait "$p" || exit 1
	done
) || { cat conc-*.err >&2; fail "a concurrent run failed"; }
expect_eq "$(cd conc && ls -A | tr '\n' ' ')" "prov-cpp.h prov.d prov.h prov.o " \
	"files left in the directory by concurrent runs"
same_header conc/prov.h a.h || fail "a concurrently written header differs from a lone run's"
echo "command line ok"
