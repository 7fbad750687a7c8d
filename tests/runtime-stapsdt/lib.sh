# Shared by tests/runtime-stapsdt: building and running programs against the
# built libstapsdt.so.0 (runtime/stapsdt), in both runs of the suite.
#
# The sanitizer run's libstapsdt.so and libusdtkit-runtime.so are clang
# ASan+UBSan objects: a clang program is built with the same sanitizers
# (its runtime serves the libraries); a gcc program, uninstrumented, is
# linked allowing the libraries' sanitizer symbols and runs with clang's
# shared ASan runtime (which carries UBSan's handlers) preloaded.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"

STAPSDT_LIBDIR=$USDTKIT_BUILDDIR/runtime/stapsdt
STAPSDT_INC=$USDTKIT_SRCDIR/runtime/stapsdt
PROGS=$USDTKIT_SRCDIR/tests/runtime-stapsdt/progs
[ -e "$STAPSDT_LIBDIR/libstapsdt.so.0" ] || fail "no $STAPSDT_LIBDIR/libstapsdt.so.0: build first"

ASAN_RT=""
if [ -n "${USDTKIT_SANITIZE:-}" ]; then
	ASAN_RT=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
	[ -e "$ASAN_RT" ] || fail "sanitizer run: no clang ASan runtime ($ASAN_RT)"
fi

# Compiles one C program against <libstapsdt.h> and -lstapsdt.
stapsdt_cc() { # CC SOURCE OUTPUT [FLAGS...]
	local cc=$1 src=$2 out=$3 san=()
	shift 3
	if [ -n "$ASAN_RT" ]; then
		if [ "$cc" = clang ]; then
			san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
		else
			san=(-Wl,--allow-shlib-undefined)
		fi
	fi
	"$cc" -std=c11 -Wall -Wextra -Werror -pedantic -g -I"$STAPSDT_INC" "$@" "${san[@]}" "$src" \
		-o "$out" -L"$STAPSDT_LIBDIR" -lstapsdt -Wl,-rpath,"$STAPSDT_LIBDIR" ||
		fail "$cc could not build $(basename "$src") against <libstapsdt.h>"
}

# Runs a program built by stapsdt_cc with CC (or an interpreter: CC "python"),
# with the sanitizer runtime preloaded where the program does not carry it.
stapsdt_run() { # CC PROGRAM [ARGS...]
	local cc=$1
	shift
	if [ -n "$ASAN_RT" ] && [ "$cc" != clang ]; then
		if [ "$cc" = python ]; then
			# The interpreter's own leaks are not ours.
			LD_PRELOAD=$ASAN_RT ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" "$@"
		else
			LD_PRELOAD=$ASAN_RT "$@"
		fi
	else
		"$@"
	fi
}
