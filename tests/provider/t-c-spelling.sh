#!/bin/bash
# Every C spelling the front end gives (c="..." in the dumped model of every
# case that parses) is a type that gcc and clang accept, in C and C++, with
# -Wall -Wextra -Werror after <stddef.h>, <stdint.h>, <sys/types.h> and
# <stdbool.h>: the header emitter puts them into prototypes. The compilers
# are the oracle. Pointers to .d-only types spelled `const volatile void *` must
# accept any object pointer, with no cast.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"

dump="$USDTKIT_BUILDDIR/tests/provider/dump-model"
cd "$USDTKIT_SRCDIR/tests/provider/cases"
for d in item*.d consumer-d-skipped.d; do
	"$dump" "$d" 2>/dev/null || true
done | grep -o ' c="[^"]*"' | sed 's/^ c="//; s/"$//' | sort -u >"$T/types"
[ "$(wc -l <"$T/types")" -ge 40 ] || fail "only $(wc -l <"$T/types") C spellings found"
{
	printf '#include <stddef.h>\n#include <stdint.h>\n#include <sys/types.h>\n#include <stdbool.h>\n'
	printf 'struct in_program { int x; };\ntypedef struct { int y; } anon_in_program;\n'
	n=0
	while IFS= read -r t; do
		printf 'void f%d(%s);\n' "$n" "$t"
		n=$((n + 1))
	done <"$T/types"
	# const volatile void * takes pointers to any object type, in C and C++.
	printf 'void g(const volatile void *);\n'
	printf 'void use(struct in_program *a, anon_in_program *b, const struct in_program *c, char **d, volatile int *e)\n'
	printf '{ g(a); g(b); g(c); g(d); g(e); }\n'
} >"$T/t.c"
cp "$T/t.c" "$T/t.cc"
for cc in gcc clang; do
	for std in c89 c99 c11 gnu17; do
		"$cc" -std=$std -Wall -Wextra -Werror -c "$T/t.c" -o "$T/t.o" ||
			{ cat -n "$T/t.c"; fail "$cc -std=$std rejects a C spelling"; }
	done
done
for cxx in g++ clang++; do
	for std in c++98 c++11 c++17; do
		"$cxx" -std=$std -Wall -Wextra -Werror -c "$T/t.cc" -o "$T/t.o" ||
			{ cat -n "$T/t.cc"; fail "$cxx -std=$std rejects a C spelling"; }
	done
done
echo "ok: $(wc -l <"$T/types") C spellings compile"
