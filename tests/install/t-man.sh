#!/bin/bash
# The man pages (as the build configures them for installation) render
# cleanly in groff (-ww: every warning), mandoc -Tlint, lexgrog (whatis) and
# man -l, and document what the programs accept: every option dtrace.c's
# parser takes is in dtrace(1), every option of usdtkit-helperd's getopt
# table in usdtkit-helperd(8), every macro and knob sdt.h's head comment
# lists in sdt.h(3), every function, type constant and limit of
# <usdtkit/runtime.h> in usdtkit-runtime(3). The lists are read from the
# sources, so a new option or function without documentation fails here.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
for tool in groff mandoc lexgrog man; do
	command -v $tool >/dev/null || fail "$tool is not installed (scripts/deps.sh installs it)"
done
M="$USDTKIT_BUILDDIR/man"
name=$(basename "$DTRACE")
pages=("$M/$name.1" "$M/usdtkit-helperd.8" "$M/sdt.h.3" "$M/usdtkit-probes.1" "$M/usdtkit-runtime.3")
export LC_ALL=C.UTF-8 MANWIDTH=200

for p in "${pages[@]}"; do
	[ -s "$p" ] || fail "no man page $p"
	! grep -q '@[A-Z_]*@' "$p" || fail "$p: an unconfigured @VARIABLE@ is left"
	groff -man -Tutf8 -ww -z "$p" 2>"$T/groff.err" || fail "$p: groff failed"
	[ ! -s "$T/groff.err" ] || { cat "$T/groff.err" >&2; fail "$p: groff warnings"; }
	mandoc -Tlint -W warning "$p" >"$T/lint" 2>&1 || true
	[ ! -s "$T/lint" ] || { cat "$T/lint" >&2; fail "$p: mandoc -Tlint warnings"; }
	lexgrog "$p" >"$T/whatis" 2>&1 || { cat "$T/whatis" >&2; fail "$p: lexgrog cannot read NAME"; }
	expect_grep ': "[^ ]+ - .+"$' "$T/whatis" "$p: whatis line"
	man -l "$p" 2>"$T/man.err" | col -b >"$T/$(basename "$p").txt"
	[ ! -s "$T/man.err" ] || { cat "$T/man.err" >&2; fail "$p: man -l complained"; }
	for sec in NAME SYNOPSIS DESCRIPTION 'SEE ALSO'; do
		expect_grep "^$sec\$" "$T/$(basename "$p").txt" "$p: section $sec"
	done
done

# Words of a rendered page, one per line (options end at , ; . ) etc.).
words() { tr -s ' \t[]|(),;' '\n' <"$1" | sed 's/[.:]$//'; }

# dtrace(1): the single-letter options of parse_options() and its whole-word ones.
src="$USDTKIT_SRCDIR/dtrace/dtrace.c"
sed -n '/^static int parse_options/,/^}/p' "$src" >"$T/parse.c"
opts=$( { sed -n "s/^[[:space:]]*case '\([A-Za-z]\)':.*/-\1/p" "$T/parse.c"
	grep -o 'strcmp(a, "-[^"]*")' "$T/parse.c" | sed 's/.*"\(.*\)")/\1/'; } | sort -u)
[ "$(echo "$opts" | wc -l)" -ge 20 ] || fail "read only $(echo "$opts" | wc -l) options from dtrace.c"
words "$T/$name.1.txt" >"$T/w1"
for o in $opts; do
	[ "$o" = -- ] && continue
	grep -qxF -- "$o" "$T/w1" || fail "dtrace(1) does not document $o"
done
expect_grep '^EXIT STATUS$' "$T/$name.1.txt" "dtrace(1): exit status"
for v in CC CFLAGS CPP TMPDIR USDTKIT_HELPER_SOCKET; do
	grep -qxF "$v" "$T/w1" || fail "dtrace(1) does not document the environment variable $v"
done

# usdtkit-helperd(8): the long options of its table and the getopt letters
# (test hooks, --test-*, are not for users and not documented).
src="$USDTKIT_SRCDIR/kernel-helper/helperd/main.c"
opts=$( { grep -oE '^[[:space:]]*\{"[a-z-]+", (no|required)_argument' "$src" | sed 's/.*{"\(.*\)",.*/--\1/' |
		grep -v '^--test-'
	sed -n 's/.*getopt_long(argc, argv, "\([a-zA-Z]*\)".*/\1/p' "$src" | grep -o . | sed 's/^/-/'; } | sort -u)
[ "$(echo "$opts" | wc -l)" -ge 9 ] || fail "read only $(echo "$opts" | wc -l) options from helperd's main.c"
words "$T/usdtkit-helperd.8.txt" >"$T/w8"
for o in $opts; do
	grep -qxF -- "$o" "$T/w8" || fail "usdtkit-helperd(8) does not document $o"
done
for v in USDTKIT_HELPER_SOCKET USDTKIT_HELPER_TIMEOUT_MS USDTKIT_DISABLE USDTKIT_DEBUG \
	DTRACE_DOF_INIT_DISABLE DTRACE_DOF_INIT_DEBUG; do
	grep -qxF "$v" "$T/w8" || fail "usdtkit-helperd(8) does not document $v"
done

# usdtkit-probes(1): its commands and the letters of its getopt string.
src="$USDTKIT_SRCDIR/kernel-helper/tools/usdtkit-probes.c"
opts=$(sed -n 's/.*getopt(argc - 1, argv + 1, "\([a-zA-Z:]*\)").*/\1/p' "$src" | tr -d : | grep -o . | sed 's/^/-/')
[ -n "$opts" ] || fail "read no options from usdtkit-probes.c"
words "$T/usdtkit-probes.1.txt" >"$T/wp"
for o in $opts list register unregister; do
	grep -qxF -- "$o" "$T/wp" || fail "usdtkit-probes(1) does not document $o"
done

# sdt.h(3): the macros and knobs of the header's head comment.
sed -n '/^ \* Public macros:/,/^ \*\//p' "$USDTKIT_SRCDIR/include/sys/sdt.h" |
	grep -oE '\b_?[A-Z][A-Z0-9_]*[A-Z0-9]\b' | grep -v '^[A-Z]$' | sort -u >"$T/macros"
[ "$(wc -l <"$T/macros")" -ge 12 ] || fail "read only $(wc -l <"$T/macros") macros from sdt.h"
# STAP_PROBE1..12 is written as a range in the comment and the page.
words "$T/sdt.h.3.txt" | sed 's/^\([A-Z_]*\)[0-9]*$/&\n\1/' >"$T/w3"
while read -r m; do
	case $m in [A-Z]*_PROBE*[0-9]) m=${m%%[0-9]*} ;; esac
	grep -qE "^${m}[0-9]*\$" "$T/w3" || grep -qF "$m" "$T/sdt.h.3.txt" ||
		fail "sdt.h(3) does not document $m"
done <"$T/macros"

# usdtkit-runtime(3): every function of <usdtkit/runtime.h>, in the
# SYNOPSIS and described (as name()) below it; the usdtkit_type constants;
# the limits, by their values; the environment the library reads (drti's).
hdr="$USDTKIT_SRCDIR/runtime/usdtkit/runtime.h"
txt="$T/usdtkit-runtime.3.txt"
grep -oE '^[a-z].*[ *]usdtkit_[a-z_]+\(' "$hdr" | grep -oE 'usdtkit_[a-z_]+\($' | tr -d '(' | sort -u >"$T/funcs"
[ "$(wc -l <"$T/funcs")" -ge 15 ] || fail "read only $(wc -l <"$T/funcs") functions from runtime.h"
sed -n '/^SYNOPSIS$/,/^DESCRIPTION$/p' "$txt" >"$T/synopsis"
sed -n '/^DESCRIPTION$/,$p' "$txt" >"$T/description"
while read -r f; do
	grep -qE "[ *]$f\(" "$T/synopsis" || fail "usdtkit-runtime(3): $f is not in the SYNOPSIS"
	grep -qF "$f()" "$T/description" || fail "usdtkit-runtime(3) does not describe $f()"
done <"$T/funcs"
consts=$(sed -n 's/^[[:space:]]*\(USDTKIT_[A-Z0-9]*\) = .*/\1/p' "$hdr")
[ "$(echo "$consts" | wc -w)" -eq 10 ] || fail "read $(echo "$consts" | wc -w) usdtkit_type constants from runtime.h, not 10"
words "$txt" >"$T/wr"
for c in $consts; do grep -qxF "$c" "$T/wr" || fail "usdtkit-runtime(3) does not document $c"; done
for m in USDTKIT_MAX_ARGS USDTKIT_MAX_NAME; do
	v=$(sed -n "s/^#define $m \([0-9]*\)\$/\1/p" "$hdr")
	[ -n "$v" ] || fail "no $m in runtime.h"
	grep -qxF "$m" "$T/wr" || grep -qE "(^|[^0-9])$v([^0-9]|\$)" "$T/description" ||
		fail "usdtkit-runtime(3) gives neither $m nor its value $v"
done
sed -n '/^ENVIRONMENT$/,/^[A-Z][A-Z ]*$/p' "$txt" >"$T/env"
for v in USDTKIT_HELPER_SOCKET USDTKIT_HELPER_TIMEOUT_MS USDTKIT_DISABLE USDTKIT_DEBUG; do
	grep -qw "$v" "$T/env" || fail "usdtkit-runtime(3) does not list $v under ENVIRONMENT"
done
echo "man pages render cleanly and document every option, macro, knob and function"
