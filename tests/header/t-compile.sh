#!/bin/bash
# Every test provider: dtrace -h, then a C and a C++ program calling every
# probe macro and every _ENABLED(), built with gcc and clang under
# -Wall -Wextra -Werror against our <sys/sdt.h> and SystemTap's, linked, and
# the notes checked with readelf against the .d (read independently by
# hdrtest.py): provider and probe names as written, argument counts, a
# semaphore on every probe. One build is linked with a `dtrace -G` object,
# the others with a small C file defining the semaphores.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
cd "$T"

for d in "$PROVIDERS"/*.d; do
	name=$(basename "$d" .d)
	"$DTRACE" -h -x typecheck -s "$d" -o "$name.h" || fail "dtrace -h -s $name.d failed"
	[ -s "$name.h" ] || fail "$name.h is empty"
	hdrtest semaphores "$d" >"$name-sem.c"
	for lang in c c++; do
		ext=$(src_ext $lang)
		hdrtest program "$d" $lang "$name.h" >"$name-prog.$ext"
		for cc in $COMPILERS; do
			for sdt in $SDT_VARIANTS; do
				drv=$(driver $cc $lang)
				exe="$name-$cc-$lang-$sdt"
				# shellcheck disable=SC2046
				$drv $WFLAGS $(sdt_flags $sdt) -O2 -I. -c "$name-prog.$ext" -o "$exe.o" ||
					fail "$name.h: $drv ($sdt sdt.h) does not compile the calls"
				if [ $cc = gcc ] && [ $lang = c ] && [ $sdt = ours ]; then
					"$DTRACE" -G -s "$d" -o "$exe-prov.o" "$exe.o" ||
						fail "dtrace -G -s $name.d failed"
					$drv -o "$exe" "$exe.o" "$exe-prov.o" ||
						fail "$name: link with the -G object failed"
				else
					gcc -c "$name-sem.c" -o "$name-sem.o"
					$drv -o "$exe" "$exe.o" "$name-sem.o" ||
						fail "$name: link with semaphore definitions failed"
				fi
				hdrtest check-notes "$d" "$exe" >/dev/null ||
					fail "$name: notes of the $drv ($sdt sdt.h) program do not match $name.d"
				./"$exe" || fail "$name: the $drv ($sdt sdt.h) program failed"
			done
		done
	done
done

# Every language standard, on the richest provider.
d="$PROVIDERS/basic.d"
hdrtest program "$d" c basic.h >std.c
hdrtest program "$d" c++ basic.h >std.cc
for cc in $COMPILERS; do
	for sdt in $SDT_VARIANTS; do
		# -Wpedantic as well with our header; SystemTap's own sdt.h fails
		# clang's -Wpedantic whatever header includes it.
		ped=""
		[ $sdt = ours ] && ped=-Wpedantic
		for std in c89 gnu89 c99 c11 c17 c2x; do
			# shellcheck disable=SC2046
			$(driver $cc c) -std=$std $WFLAGS $ped $(sdt_flags $sdt) -I. -c std.c -o std.o ||
				fail "basic.h: $cc -std=$std ($sdt sdt.h) fails"
		done
		for std in c++98 c++11 c++14 c++17 c++20 c++2b; do
			# shellcheck disable=SC2046
			$(driver $cc c++) -std=$std $WFLAGS $ped $(sdt_flags $sdt) -I. -c std.cc -o std.o ||
				fail "basic.h: $cc -std=$std ($sdt sdt.h) fails"
		done
	done
done

# Tabs turned into spaces and CRLF line endings in the .d change nothing.
tr -d '\r' <"$PROVIDERS/multi.d" | sed 's/$/\r/' >crlf.d
"$DTRACE" -h -s crlf.d -o crlf.h || fail "dtrace -h on a CRLF file failed"
hdrtest program crlf.d c crlf.h >crlf.c
expand -t 8 crlf.h >crlf-spaces.h
sed -i 's/crlf.h/crlf-spaces.h/' crlf.c
gcc $WFLAGS -I"$SDT_INC" -c crlf.c -o crlf.o || fail "CRLF .d / expanded tabs header does not compile"
hdrtest semaphores crlf.d >crlf-sem.c
gcc -o crlf crlf.o crlf-sem.c && hdrtest check-notes crlf.d crlf >/dev/null ||
	fail "CRLF .d: notes do not match"
echo "all providers compiled and checked"
