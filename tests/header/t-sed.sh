#!/bin/bash
# The post-processing real projects apply to generated headers
# (docs/compat.md, "Header shape"): prefix renames (PostgreSQL, PHP, CPython,
# Ruby), Erlang's lower-casing of whole `#define ERLANG_X(...)` lines,
# PostgreSQL's `char *` -> `const char *`, tabs turned into spaces, and
# GLib's #undef of the semaphore switches (then no -G object and no
# semaphore definition is linked). After each, the header must compile as C
# and C++ with gcc and clang under -Werror and give the right notes.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
cd "$T"

# build NAME D-FILE [hdrtest program options] -- build and check every variant
build() {
	local name=$1 d=$2 semflag=""
	shift 2
	[ "${NOSEM:-}" = 1 ] && semflag=--no-semaphores
	hdrtest semaphores "$d" >"$name-sem.c"
	for lang in c c++; do
		ext=$(src_ext $lang)
		hdrtest program "$d" $lang "$name.h" "$@" >"$name-prog.$ext"
		for cc in $COMPILERS; do
			for sdt in $SDT_VARIANTS; do
				drv=$(driver $cc $lang)
				# shellcheck disable=SC2046
				$drv $WFLAGS -O2 $(sdt_flags $sdt) -I. -c "$name-prog.$ext" -o "$name.o" ||
					fail "$name: $drv ($sdt sdt.h) does not compile after the sed"
				if [ "${NOSEM:-}" = 1 ]; then
					$drv -o "$name" "$name.o" ||
						fail "$name: $drv ($sdt sdt.h) does not link without semaphores"
				else
					gcc -c "$name-sem.c" -o "$name-sem.o"
					$drv -o "$name" "$name.o" "$name-sem.o" || fail "$name: link failed"
				fi
				hdrtest check-notes "$d" "$name" $semflag >/dev/null ||
					fail "$name: $drv ($sdt sdt.h): notes do not match"
			done
		done
	done
}

# A provider file of the given name with basic.d's probes.
provider_as() { # name
	sed "s/^provider basic /provider $1 /" "$PROVIDERS/basic.d" >"$1.d"
	"$DTRACE" -h -s "$1.d" -o "$1.h.tmp" || fail "dtrace -h -s $1.d failed"
}

# PostgreSQL (src/backend/utils/postprocess_dtrace.sed).
provider_as postgresql
sed -e 's/POSTGRESQL_/TRACE_POSTGRESQL_/g' -e 's/( *char \*/(const char */g' \
	-e 's/, *char \*/, const char */g' postgresql.h.tmp >postgresql.h
grep -q 'const char \*' postgresql.h || fail "the PostgreSQL sed found no 'char *' to const-qualify"
build postgresql postgresql.d --rename POSTGRESQL_ TRACE_POSTGRESQL_
# ... which is done so that const strings can be passed without a warning.
cat >pgconst.c <<'P'
#include "postgresql.h"
int main(void)
{
	const char *q = "select 1";
	TRACE_POSTGRESQL_QUERY_DONE(q, 1, q);
	TRACE_POSTGRESQL_STRING_ARG(q, q);
	return 0;
}
P
for cc in gcc clang; do
	$cc $WFLAGS -I"$SDT_INC" -I. -c pgconst.c -o pgconst.o ||
		fail "$cc: const strings are still diagnosed after PostgreSQL's sed"
done

# The general form of that sed, const before every `char *` anywhere: only
# plain strings are spelled `char *`, so it const-qualifies exactly those.
provider_as pgall
sed 's/\( *char \*\)/const \1/g' pgall.h.tmp >pgall.h
build pgall pgall.d

# PHP (configure: s,PHP_,DTRACE_,g).
provider_as php
sed 's,PHP_,DTRACE_,g' php.h.tmp >php.h
build php php.d --rename PHP_ DTRACE_

# CPython (Makefile: s/PYTHON_/PyDTrace_/, first match on each line only).
provider_as python
sed 's/PYTHON_/PyDTrace_/' python.h.tmp >python.h
build python python.d --rename PYTHON_ PyDTrace_

# Ruby.
provider_as ruby
sed 's/RUBY_/RUBY_DTRACE_/g' ruby.h.tmp >ruby.h
build ruby ruby.d --rename RUBY_ RUBY_DTRACE_

# Erlang/OTP (erts Makefile): whole #define lines lower-cased.
provider_as erlang
sed -e '/^#define[ ]*ERLANG_[A-Z0-9_]*(.*)/y/ABCDEFGHIJKLMNOPQRSTUVWXYZ/abcdefghijklmnopqrstuvwxyz/' \
	erlang.h.tmp >erlang.h
grep -q '^#define erlang_query_start(arg1) \\$' erlang.h ||
	fail "Erlang's sed did not lower-case the macro definitions"
build erlang erlang.d --lower ERLANG_

# Tabs turned into spaces.
provider_as spaces
expand -t 4 spaces.h.tmp >spaces.h
grep -q "$(printf '\t')" spaces.h && fail "expand left tabs"
build spaces spaces.d

# GLib (glib/meson.build): the semaphore switches become #undef; no -G object.
provider_as glib
sed -e 's,define STAP_HAS_SEMAPHORES 1,undef STAP_HAS_SEMAPHORES,' \
	-e 's,define _SDT_HAS_SEMAPHORES 1,undef _SDT_HAS_SEMAPHORES,' glib.h.tmp >glib.h
grep -q '^#undef _SDT_HAS_SEMAPHORES' glib.h || fail "GLib's sed found no '#define _SDT_HAS_SEMAPHORES 1'"
grep -q '^#undef STAP_HAS_SEMAPHORES' glib.h || fail "GLib's sed found no '#define STAP_HAS_SEMAPHORES 1'"
NOSEM=1 build glib glib.d
# ... and then _ENABLED() is true: the probes fire unconditionally.
cat >glibenabled.c <<'P'
#include "glib.h"
int main(void)
{
	return GLIB_NOARGS_ENABLED() && GLIB_QUERY_START_ENABLED() ? 0 : 1;
}
P
for cc in gcc clang; do
	for sdt in $SDT_VARIANTS; do
		# shellcheck disable=SC2046
		$cc $WFLAGS $(sdt_flags $sdt) -I. glibenabled.c -o glibenabled ||
			fail "$cc ($sdt sdt.h): _ENABLED() after GLib's sed does not build without semaphores"
		./glibenabled || fail "$cc ($sdt sdt.h): _ENABLED() is false without semaphores"
	done
done
echo "all post-processed headers ok"
