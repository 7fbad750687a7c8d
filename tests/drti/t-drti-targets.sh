#!/bin/bash
# drti in every target the -G object may be built for: programs built with
# clang, gcc -m32 and clang -m32 register with the (64-bit) server with the
# same 24-byte message, the address leading to their note (the -m32 ones are
# built always and run where the kernel runs 32-bit programs); the generated
# provider source (`dtrace -G -k`), drti included, compiles without a single
# warning under -std=c89/c99 -pedantic -Werror -Wall -Wextra for x86-64,
# -m32 and aarch64, with gcc and clang.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/drti/lib.sh"
build_progs gcc # for app.d, names.h

start_fake reply
for v in "clang" "gcc -m32" "clang -m32"; do
	# shellcheck disable=SC2086
	set -- $v
	cc=$1
	shift
	d="$T/t-$(echo "$v" | tr ' ' '_')"
	mkdir -p "$d"
	cp "$B/app.d" "$B/app.h" "$B/lib.h" "$B/names.h" "$d/"
	(
		cd "$d"
		$cc "$@" -I"$SDT_INC" -I. -O2 -c "$PROGS/small.c" -o small.o
		CC="$cc" CFLAGS="$*" "$DTRACE" -G -s app.d -o app-prov.o small.o
		$cc "$@" small.o app-prov.o -o small
	) || fail "$v: build failed"
	if [ "${v#* }" = -m32 ]; then
		file "$d/small" | grep -q 'ELF 32-bit' || fail "$v: not a 32-bit program"
		if ! can_exec_m32; then
			echo "note: $v: $M32_NO_EXEC"
			continue
		fi
	fi
	n0=$(nmsgs)
	out=$(env -u USDTKIT_DEBUG -u USDTKIT_DISABLE USDTKIT_HELPER_SOCKET="$SOCK" "$d/small" "$d/maps" 2>"$d/err") ||
		fail "$v: the program failed"
	expect_eq "$out" ok "$v: output"
	[ ! -s "$d/err" ] || fail "$v: stderr not empty"
	wait_msgs $((n0 + 1)) || fail "$v: no REGISTER"
	reg=$(msgs | sed -n "$((n0 + 1))p")
	check_msg "$reg" "$T_REG" "$(field "$reg" pid)" "" "$v REGISTER"
	check_addr "$(field "$reg" addr)" "$d/maps" "$d/small" "$v"
	if [ "${v#* }" = -m32 ]; then
		[ $(($(field "$reg" addr))) -lt $((1 << 32)) ] || fail "$v: address beyond 32 bits"
	fi
	echo "ok: $v program registers"
done
sleep 0.2
# exit sends nothing: one message per program, all REGISTERs
expect_eq "$(msgs | grep -vc " type=$T_REG " || true)" 0 "messages other than REGISTER (none at exit)"
stop_fake

# The generated source, kept by -k, compiled strictly (dtrace -G itself
# compiles it with -w, so only this shows warnings).
for tgt in "gcc" "clang" "gcc -m32" "clang -m32" "aarch64-linux-gnu-gcc"; do
	# shellcheck disable=SC2086
	set -- $tgt
	cc=$1
	shift
	command -v "$cc" >/dev/null || fail "$cc is not installed"
	kept=$(cd "$B" && CC="$cc" CFLAGS="$*" "$DTRACE" -G -k -s app.d -o "$T/k.o" 2>&1 |
		sed -n 's/.*kept the provider object.s source in //p')
	[ -f "$kept" ] || fail "$tgt: dtrace -G -k kept no source"
	for std in c89 c99 gnu11; do
		$cc "$@" -std=$std -pedantic -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes \
			-Wmissing-prototypes -Wredundant-decls -Wundef -Werror -fPIC -c "$kept" -o "$T/strict.o" ||
			fail "$tgt -std=$std: the generated source does not compile warning-free"
	done
	# the compiled drti is in there: its constructor and its socket calls
	nm "$T/strict.o" | grep -q ' U socket$' || fail "$tgt: the object does not call socket()"
	rm -rf "$(dirname "$kept")"
	echo "ok: $tgt: generated source compiles with -std=c89/c99/gnu11 -pedantic -Werror"
done
