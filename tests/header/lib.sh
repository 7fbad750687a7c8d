# Helpers shared by the header tests (sourced after tests/lib/common.sh).

HDR_DIR="$USDTKIT_SRCDIR/tests/header"
PROVIDERS="$HDR_DIR/providers"
hdrtest() { python3 "$HDR_DIR/hdrtest.py" "$@"; }

# The two <sys/sdt.h> a generated header must work with: ours (include/) and
# SystemTap's (the system include path, Debian's multiarch directory).
SDT_VARIANTS="ours stap"
# Used unquoted in command lines ($(sdt_flags V)), ours is a response file
# (gcc's and clang's @FILE, which quotes): the checkout's path may hold a
# space, $T (mktemp's) does not.
printf -- '-I"%s"\n' "$(printf '%s' "$SDT_INC" | sed 's/[\\"]/\\&/g')" >"$T/sdt-ours.rsp"
sdt_flags() { # variant
	case $1 in
	ours) echo "@$T/sdt-ours.rsp" ;;
	stap) echo "" ;;
	esac
}

# The compiler driver for a language: c or c++.
driver() { # compiler lang
	case $1:$2 in
	gcc:c) echo gcc ;;
	gcc:c++) echo g++ ;;
	clang:c) echo clang ;;
	clang:c++) echo clang++ ;;
	esac
}
src_ext() { [ "$1" = c ] && echo c || echo cc; }

WFLAGS="-Wall -Wextra -Werror"
