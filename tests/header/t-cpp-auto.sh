#!/bin/bash
# A provider file that needs the C preprocessor, given without -C (as a
# display server's meson build does with its provider: #ifdef __APPLE__ ...
# #else #include <sys/types.h> #endif, then D's `string`): dtrace runs cpp by
# itself, says so in exactly one warning line naming the directive and -C,
# and produces what -C produces, which SystemTap's tool agrees with. -D/-I/-U
# apply; files that do not need cpp never run it; a missing or failing cpp
# is a clear error with no output; diagnostics point into the original file.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
[ -x /usr/bin/dtrace ] || fail "SystemTap's dtrace is missing (systemtap-sdt-dev; scripts/deps.sh installs it)"
cd "$T"
mkdir C auto inc

# The shape of a real display server's provider file (written for this test).
cat >Display.d <<'D'
/*
 * Display server probes.
 */
#ifdef __APPLE__
#define string char *
#define pid_t uint32_t
#define zoneid_t uint32_t
#elif defined(__FreeBSD__)
#define zoneid_t id_t
#else
#include <sys/types.h>
#endif

typedef const uint8_t *const_bytes_p;

provider Dpy {
	/* opcode name, minor opcode, length, client, request buffer */
	probe request__start(string, uint8_t, uint16_t, int, void *);
	probe request__done(string, uint8_t, uint32_t, int, int);
	/* client, address, pid, zone */
	probe client__auth(int, string, pid_t, zoneid_t);
	probe input__event(int, uint32_t, int8_t, const_bytes_p);
};

#pragma D attributes Unstable/Unstable/Common provider Dpy provider
#pragma D attributes Private/Private/Unknown  provider Dpy module
#pragma D attributes Unstable/Unstable/Common provider Dpy args
D
# What cpp makes of it on Linux, written out by hand.
cat >want.d <<'D'
typedef const uint8_t *const_bytes_p;
provider Dpy {
	probe request__start(string, uint8_t, uint16_t, int, void *);
	probe request__done(string, uint8_t, uint32_t, int, int);
	probe client__auth(int, string, pid_t, zoneid_t);
	probe input__event(int, uint32_t, int8_t, const_bytes_p);
};
D
warning_re="^Display\.d:4:2: warning: '#ifdef' needs the C preprocessor: .*pass -C"

# -h and -G without -C: exit 0, one line on stderr, the warning.
for mode in h G; do
	ext=$([ $mode = h ] && echo h || echo o)
	"$DTRACE" -$mode -s Display.d -o auto/dpy.$ext 2>$mode.err ||
		{ cat $mode.err >&2; fail "dtrace -$mode without -C failed"; }
	expect_eq "$(wc -l <$mode.err)" 1 "lines on stderr of dtrace -$mode"
	expect_grep "$warning_re" $mode.err "the warning of dtrace -$mode"
	"$DTRACE" -C -$mode -s Display.d -o C/dpy.$ext 2>C-$mode.err || fail "dtrace -C -$mode failed"
	[ ! -s C-$mode.err ] || { cat C-$mode.err >&2; fail "dtrace -C -$mode warned"; }
done
cmp auto/dpy.h C/dpy.h || fail "the header differs from dtrace -C's"
nm -g --defined-only auto/dpy.o | awk '/_semaphore$/ { print $3 }' | sort >ours.sems
nm -g --defined-only C/dpy.o | awk '/_semaphore$/ { print $3 }' | sort >C.sems
diff C.sems ours.sems || fail "the object's semaphores differ from dtrace -C's"

# The header works: every macro called, linked with the -G object, the notes
# those of want.d.
hdrtest program want.d c auto/dpy.h >prog.c
gcc $WFLAGS -I"$SDT_INC" -Iauto prog.c auto/dpy.o -o prog || fail "a program using the header"
hdrtest check-notes want.d prog >/dev/null || fail "notes differ from want.d"

# SystemTap's tool on the same file: the same semaphores defined, and a
# program calling every macro gets the same notes and semaphore references.
/usr/bin/dtrace -h -s Display.d -o stap.h >/dev/null || fail "SystemTap's dtrace -h failed"
/usr/bin/dtrace -G -s Display.d -o stap.o >/dev/null || fail "SystemTap's dtrace -G failed"
nm -g --defined-only stap.o | awk '/_semaphore$/ { print $3 }' | sort >stap.sems
[ -s stap.sems ] || fail "no semaphore read from SystemTap's object"
diff stap.sems ours.sems || fail "semaphores differ from SystemTap's"
{
	echo '#include HDR'
	echo 'void f(void);'
	echo 'void f(void) {'
	grep -oE '^#define DPY_[A-Z_]+\([^)]*\)' auto/dpy.h | grep -v '_ENABLED()' |
		sed -E 's/^#define //; s/arg[0-9]+/0/g; s/$/;/'
	echo '}'
} >calls.c
gcc -O2 -I"$SDT_INC" -DHDR='"auto/dpy.h"' -c calls.c -o calls-ours.o || fail "calls, our header"
gcc -O2 -DHDR='"stap.h"' -c calls.c -o calls-stap.o || fail "calls, SystemTap's header"
for v in ours stap; do
	readelf -n calls-$v.o | awk '/Provider:/ { p = $2 } /Name:/ { print p, $2 }' | sort >$v.notes
	nm -u calls-$v.o | awk '/_semaphore$/ { print $2 }' | sort >$v.refs
done
expect_eq "$(wc -l <ours.notes)" 4 "probe sites in the calls"
diff stap.notes ours.notes || fail "notes differ from SystemTap's"
diff stap.refs ours.refs || fail "semaphore references differ from SystemTap's"

# A $CPP that logs its runs, to see when cpp runs at all.
cat >mycpp <<'S'
#!/bin/sh
echo "$@" >>"${0%/*}/cpp.log"
exec gcc "$@"
S
chmod +x mycpp
export CPP="$T/mycpp -E"

# -D, -I and -U given without -C apply.
cat >inc/levels.h <<'H'
#define LEVEL 2
H
cat >opts.d <<'D'
#include "levels.h"
provider opts {
	probe always(int);
#ifdef EXTRA
	probe extra(int);
#endif
#if LEVEL > 1
	probe deep(long);
#endif
};
D
macros() { grep -oE '^#define OPTS_[A-Z]+\(' "$1" | sed 's/^#define //; s/($//' | sort | tr '\n' ' '; }
"$DTRACE" -h -Iinc -DEXTRA -s opts.d -o opts1.h 2>/dev/null || fail "-I/-D without -C"
expect_eq "$(macros opts1.h)" "OPTS_ALWAYS OPTS_DEEP OPTS_EXTRA " "probes with -Iinc -DEXTRA"
"$DTRACE" -h -I inc -DEXTRA -UEXTRA -s opts.d -o opts2.h 2>/dev/null || fail "-U without -C"
expect_eq "$(macros opts2.h)" "OPTS_ALWAYS OPTS_DEEP " "probes with -DEXTRA -UEXTRA"
expect_grep '^-E .*-Iinc.*-DEXTRA.*opts\.d' cpp.log "\$CPP got the options"

# A #define the file uses needs cpp (the warning points at it); one it does
# not use does not.
cat >defined.d <<'D'
/* #ifdef in a comment is no directive */
#define TxnId unsigned int
provider defd {
	probe start(TxnId);
};
D
"$DTRACE" -h -s defined.d -o defined.h 2>defined.err || fail "a used #define without -C"
expect_eq "$(wc -l <defined.err)" 1 "lines on stderr for a used #define"
expect_grep "^defined\.d:2:2: warning: '#define' needs the C preprocessor: .*pass -C" defined.err \
	"the warning for a used #define"
expect_grep '^#define DEFD_START\(' defined.h "the probe of defined.d"

rm -f cpp.log
cat >plain.d <<'D'
#!/usr/sbin/dtrace -s
# file: plain.c (a comment line, as SystemTap's tool reads it)
/*
#include "not-a-directive.h"
#if 0
*/
// #ifdef NOR_THIS
#define UNUSED_MACRO 1
#undef UNUSED_MACRO
#pragma D attributes Evolving/Evolving/Common provider plain provider
provider plain {
	probe p(int); # a trailing comment
};
D
gcc -E -xc opts.d -Iinc >pre.i
"$DTRACE" -h -DX -Iinc -s plain.d -s pre.i -o plain.h 2>plain.err ||
	{ cat plain.err >&2; fail "files that need no cpp"; }
[ ! -s plain.err ] || { cat plain.err >&2; fail "files that need no cpp gave diagnostics"; }
[ ! -e cpp.log ] || fail "cpp ran on files that do not need it: $(cat cpp.log)"
expect_grep '^#define PLAIN_P\(' plain.h "the probe of plain.d"
expect_grep '^#define OPTS_DEEP\(' plain.h "the probes of the preprocessed file"

# Two files that need cpp: still one warning line; with -C none.
"$DTRACE" -G -s Display.d -s defined.d -o two.o 2>two.err || fail "two files needing cpp"
expect_eq "$(wc -l <two.err)" 1 "lines on stderr for two files needing cpp"
expect_grep "$warning_re" two.err "the warning names the first file"
nm two.o | grep -q 'defd_start_semaphore' || fail "the second file's probe is missing"
"$DTRACE" -C -G -s Display.d -s defined.d -o two.o 2>two.err || fail "two files with -C"
[ ! -s two.err ] || { cat two.err >&2; fail "dtrace -C warned"; }

# No preprocessor: the warning, an error naming it, exit 1, no output.
rc=0
CPP="$T/no-such-cpp" "$DTRACE" -h -s Display.d -o none.h 2>none.err || rc=$?
expect_eq $rc 1 "exit status without a preprocessor"
expect_grep "$warning_re" none.err "the warning before the error"
expect_grep "^dtrace: error: .*no-such-cpp.*Display\.d" none.err "the missing preprocessor is named"
[ ! -e none.h ] || fail "an output file was left without a preprocessor"
# A preprocessor that fails: its own message, exit 1, no output; an
# existing output is left as it was.
printf '#include "missing.h"\nprovider m { probe p(); };\n' >missing.d
echo old >missing.o
rc=0
"$DTRACE" -G -s missing.d -o missing.o 2>missing.err || rc=$?
expect_eq $rc 1 "exit status when cpp fails"
expect_grep 'missing\.h' missing.err "cpp's own message"
expect_eq "$(cat missing.o)" old "the previous output after cpp failed"

# A pipe cannot be read twice (once here, once by cpp): an error saying -C.
rc=0
cat Display.d | "$DTRACE" -h -s /dev/stdin -o pipe.h 2>pipe.err || rc=$?
expect_eq $rc 1 "exit status for a pipe that needs cpp"
expect_grep "^/dev/stdin:4:2: error: .*not a regular file.*pass -C" pipe.err "the error for a pipe"
[ ! -e pipe.h ] || fail "an output file was left for a pipe"
cat Display.d | "$DTRACE" -C -h -s /dev/stdin -o pipe.h || fail "a pipe with -C"
expect_grep '^#define DPY_INPUT_EVENT\(' pipe.h "the probes read from a pipe with -C"

# Diagnostics after cpp point into the original file and the included one.
cat >inc/bad.h <<'H'
/* line 1 */
	probe broken(int, ;
H
cat >bad.d <<'D'
#ifndef NOTHING
provider bad {
	probe fine(int);
	probe fine(int);
#include "bad.h"
	probe also(nosuchtype);
};
#endif
D
rc=0
"$DTRACE" -h -Iinc -s bad.d -o bad.h 2>bad.err || rc=$?
expect_eq $rc 1 "exit status of errors after cpp"
expect_grep '^bad\.d:4:8: error: probe .fine. of provider .bad. redeclared' bad.err \
	"the redeclared probe at its line in bad.d"
expect_grep '^bad\.d:3:8: note: previous declaration' bad.err "the note at the first one"
expect_grep '^inc/bad\.h:2:[0-9]+: error' bad.err "the error in the included file"
expect_grep '^bad\.d:6:[0-9]+: error: .*nosuchtype' bad.err "the error after the include"
[ ! -e bad.h ] || fail "an output file was left after errors"
echo "dtrace without -C on files that need cpp ok"
