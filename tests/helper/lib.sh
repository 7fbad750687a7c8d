# Helpers shared by the helper tests (source after tests/lib/common.sh).
PROBES="$USDTKIT_BUILDDIR/kernel-helper/tools/usdtkit-probes"
PROGS="$USDTKIT_SRCDIR/tests/helper/progs"
SDTCHECK="$USDTKIT_SRCDIR/tests/helper/sdtcheck.py"
# The test programs' provider, unique per run so that concurrent runs never
# share a tracefs group (progs/*.c take it as -DPROV).
HPROV="hlpt$$"
[ -x "$PROBES" ] || fail "no $PROBES: build first"

# SystemTap's header for every target: Debian installs it in the native
# multiarch directory only (x86_64-linux-gnu, aarch64-linux-gnu), which -m32
# compilations do not search.
STAP_INC="$T/stapinc"
STAP_SYS="/usr/include/$(gcc -print-multiarch)/sys"
mkdir -p "$STAP_INC/sys"
for h in sdt.h sdt-config.h; do
	[ -e "$STAP_SYS/$h" ] || fail "$STAP_SYS/$h missing (systemtap-sdt-dev)"
	ln -sf "$STAP_SYS/$h" "$STAP_INC/sys/$h"
done

# Build a variant of the test program into $T/VARIANT. Sets PROG (what to
# run) and PFILE (the file holding the probes: PROG, or the .so).
#   VARIANT: COMPILER-KIND[-HEADER], KIND in pie nopie so m32 O0,
#   HEADER stap (default) or ours (include/sys/sdt.h)
build_variant() { # variant
	local v=$1 d="$T/$1" cc kind hdr inc flags
	cc=${v%%-*}
	kind=${v#*-}
	hdr=stap
	case $kind in *-ours) kind=${kind%-ours}; hdr=ours ;; esac
	inc="$STAP_INC"
	[ "$hdr" = ours ] && inc="$SDT_INC"
	mkdir -p "$d"
	flags="-O2 -I$inc -DPROV=$HPROV"
	PROG="$d/prog"
	PFILE="$PROG"
	case $kind in
	pie) flags="$flags -fPIE -pie" ;;
	nopie) flags="$flags -fno-pie -no-pie" ;;
	m32) flags="$flags -m32" ;;
	O0) flags="-O0 -I$inc -DPROV=$HPROV" ;;
	so)
		$cc $flags -fPIC -shared -o "$d/libhlpt.so" "$PROGS/probes.c" "$PROGS/nosema.c" ||
			return 1
		$cc -O2 -o "$PROG" "$PROGS/main.c" -L"$d" -lhlpt -Wl,-rpath,"$d" || return 1
		PFILE="$d/libhlpt.so"
		return 0
		;;
	*) fail "unknown variant $v" ;;
	esac
	# shellcheck disable=SC2086
	$cc $flags -o "$PROG" "$PROGS/probes.c" "$PROGS/nosema.c" "$PROGS/main.c"
}
