#!/bin/bash
# dtrace -C: the preprocessor with -I (both spellings), -D (with and without a
# value), -U, #include and #if; $CPP honoured (with arguments in it);
# diagnostics pointing into the original files; a failing preprocessor gives
# exit 1, its own message and no output; input that was already preprocessed
# (line markers) works without -C.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
cd "$T"
mkdir inc inc2

cat >inc/common.h <<'H'
#define ARGS int id, char *name
H
cat >inc2/limits.h <<'H'
#define LEVEL 2
H
cat >pp.d <<'D'
#include "common.h"
#include <limits.h>
provider pp {
	probe always(ARGS);
#ifdef EXTRA
	probe extra(int);
#endif
#if LEVEL > 1 && defined(DEEP)
	probe deep(long depth);
#elif LEVEL > 1
	probe shallow(long depth);
#else
	probe level_one();
#endif
#if VALUE == 7
	probe seven(int);
#endif
};
D
# The provider each command line must produce, written out by hand.
cat >want-full.d <<'D'
provider pp {
	probe always(int id, char *name);
	probe extra(int);
	probe deep(long depth);
	probe seven(int);
};
D
cat >want-min.d <<'D'
provider pp {
	probe always(int id, char *name);
	probe shallow(long depth);
};
D

# check_header HEADER WANT.d: the header defines exactly WANT.d's probes.
check_header() {
	hdrtest program "$2" c "$1" >chk.c
	hdrtest semaphores "$2" >chk-sem.c
	gcc $WFLAGS -I"$SDT_INC" -I. chk.c chk-sem.c -o chk || fail "$1 lacks a probe of $2"
	hdrtest check-notes "$2" chk >/dev/null || fail "$1: notes differ from $2"
	n_want=$(hdrtest expect "$2" | wc -l)
	n_got=$(grep -c '^#define [A-Z0-9_]*_ENABLED() ' "$1")
	expect_eq "$n_got" "$n_want" "$1: number of probes"
}

"$DTRACE" -C -I inc -Iinc2 -DEXTRA -D DEEP -DVALUE=7 -h -s pp.d -o full.h ||
	fail "dtrace -C with -I/-D failed"
check_header full.h want-full.d
"$DTRACE" -h -C -Iinc -I inc2 -DEXTRA -UEXTRA -s pp.d -o min.h || fail "dtrace -C with -U failed"
check_header min.h want-min.d

# -D and -I without -C are accepted, and then the directives are not run.
"$DTRACE" -h -DEXTRA -Iinc -s want-min.d -o nocpp.h || fail "-D/-I without -C rejected"
check_header nocpp.h want-min.d

# $CPP, with an argument inside it.
cat >mycpp <<'S'
#!/bin/sh
echo "$@" >>"${0%/*}/cpp.log"
exec gcc "$@"
S
chmod +x mycpp
CPP="$T/mycpp -E" "$DTRACE" -C -Iinc -Iinc2 -DEXTRA -DDEEP -DVALUE=7 -h -s pp.d -o viacpp.h ||
	fail "dtrace -C with CPP='mycpp -E' failed"
[ -s cpp.log ] || fail "\$CPP was not run"
expect_grep '^-E .*-Iinc.*pp\.d' cpp.log "\$CPP got its own argument, the options and the file"
check_header viacpp.h want-full.d

# A preprocessor that fails: its message shown, exit 1, no output file.
set +e
"$DTRACE" -C -h -s pp.d -o fail.h 2>fail.err
rc=$?
set -e
expect_eq $rc 1 "exit status when cpp fails"
expect_grep 'common\.h' fail.err "the preprocessor's own message is shown"
[ -e fail.h ] && fail "an output file was left after cpp failed"
set +e
CPP="$T/no-such-cpp" "$DTRACE" -C -h -s pp.d -o fail.h 2>fail.err
rc=$?
set -e
expect_eq $rc 1 "exit status when \$CPP does not exist"
expect_grep 'no-such-cpp' fail.err "a missing \$CPP is named"
[ -e fail.h ] && fail "an output file was left when \$CPP does not exist"

# Diagnostics of a -C run point into the original (included) file.
cat >inc/bad.h <<'H'
/* line 1 */
/* line 2 */
	probe broken(int, ;
H
cat >bad.d <<'D'
provider bad {
	probe fine(int);
#include "bad.h"
};
D
set +e
"$DTRACE" -C -Iinc -h -s bad.d -o bad.h 2>bad.err
rc=$?
set -e
expect_eq $rc 1 "exit status of a syntax error under -C"
expect_grep '^inc/bad\.h:3:[0-9]+: error' bad.err "the error points into the included file"
[ -e bad.h ] && fail "an output file was left after a syntax error"

# Input already preprocessed (with line markers) given without -C.
gcc -E -xc -Iinc -Iinc2 -DEXTRA -DDEEP -DVALUE=7 pp.d >pp.i
grep -q '^# [0-9]* "pp.d"' pp.i || fail "gcc -E wrote no line markers"
"$DTRACE" -h -s pp.i -o pre.h || fail "dtrace -h on preprocessed input failed"
check_header pre.h want-full.d
gcc -E -xc -Iinc bad.d >bad.i
set +e
"$DTRACE" -h -s bad.i -o bad.h 2>bad.err
set -e
expect_grep '^inc/bad\.h:3:[0-9]+: error' bad.err "line markers re-point diagnostics without -C"
echo "dtrace -C ok"
