#!/bin/bash
# The header in every language standard, warning-free: std.c as C89..C2x and C++98..C++2b with
# -Wall -Wextra -Wpedantic -Werror under gcc and clang, at -O0 and -O2; then the probe test
# program at every optimisation level, its notes checked (sizes, signs, operand forms).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/sdt/lib.sh"

# The header marks itself a system header: -Wsystem-headers keeps its own text under the
# checks. Only the variadic macros, an extension before C99 and C++11 that std.c asks for with
# SDT_USE_VARIADIC, are let through there.
sysw() { # std
	case $1 in
	c89 | gnu89 | c++98 | gnu++98 | c++03) echo "-Wsystem-headers -Wno-variadic-macros" ;;
	*) echo "-Wsystem-headers" ;;
	esac
}

n=0
for cc in gcc clang; do
	cxx=${cc/gcc/g++}
	cxx=${cxx/clang/clang++}
	for std in c89 gnu89 c99 gnu99 c11 gnu11 c17 gnu17 c2x; do
		for opt in -O0 -O2; do
			# shellcheck disable=SC2046
			$cc -std=$std $opt -I"$SDT_INC" -Wall -Wextra -Wpedantic -Werror $(sysw $std) \
				-c "$SDT_DIR/std.c" -o "$T/std.o" || fail "$cc -std=$std $opt"
			n=$((n + 1))
		done
		sdt_check forms x86_64 "$T/std.o" || fail "$cc -std=$std: operand forms"
	done
	for std in c++98 gnu++98 c++03 c++11 c++14 c++17 c++20 c++2b; do
		for opt in -O0 -O2; do
			# shellcheck disable=SC2046
			$cxx -x c++ -std=$std $opt -I"$SDT_INC" -Wall -Wextra -Wpedantic -Werror \
				$(sysw $std) -c "$SDT_DIR/std.c" -o "$T/std.o" || fail "$cxx -std=$std $opt"
			n=$((n + 1))
		done
		sdt_check forms x86_64 "$T/std.o" || fail "$cxx -std=$std: operand forms"
	done
	for opt in -O0 -O1 -O2 -O3 -Os -Og; do
		build_probes $cc pie "$T/$cc$opt" $opt -Wall -Wextra -Wpedantic -Werror -std=gnu11
		check_notes x86_64 "$T/$cc$opt"
	done
	echo "ok: $cc"
done
echo "ok: $n warning-free standard builds, 12 optimisation levels"
