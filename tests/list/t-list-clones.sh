#!/bin/bash
# dtrace -l names the source function of a site in a copy GCC made of it at
# -O2: part_fn, not part_fn.part.0; likewise .isra.N, .constprop.N (chained:
# isra_fn.constprop.0.isra.0), .cold, and .lto_priv.N with -flto. With -g
# the name is DWARF's (the copy's abstract origin, which addr2line shows):
# label_fn, whose symbol is lt_asm_named.constprop.0 through an asm label;
# without -g it is the symbol without the suffixes (lt_asm_named). Each
# build is first checked to hold every kind of copy, with a site in it;
# the listing is compared line for line with readelf, nm and addr2line.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/list/lib.sh"

# build_clones DIR FLAGS...: DIR/clones from progs/clones.c and two units of clones_lto.c.
build_clones() {
	local d=$1
	shift
	mkdir -p "$d"
	gcc "$@" -I"$SDT_INC" -c "$PROGS/clones_lto.c" -DLT_UNIT=a -DLT_REPORT -o "$d/a.o" &&
		gcc "$@" -I"$SDT_INC" -c "$PROGS/clones_lto.c" -DLT_UNIT=b -o "$d/b.o" &&
		gcc "$@" -I"$SDT_INC" -c "$PROGS/clones.c" -o "$d/m.o" &&
		gcc "$@" -o "$d/clones" "$d/m.o" "$d/a.o" "$d/b.o" ||
		fail "building clones.c with gcc $*"
}

# The symbol (nm) holding probe NAME's site in FILE must match the regex.
site_in_copy() { # file name regex
	local p n pc sym found=""
	while read -r p n pc; do
		[ "$n" = "$2" ] || continue
		sym=$(nm_function "$1" "$pc")
		[[ $sym =~ $3 ]] || fail "the $2 site is in '$sym', not a copy like $3: nothing tests it"
		found=1
	done < <(note_sites "$1")
	[ -n "$found" ] || fail "no $2 site in $1"
}

for flags in "-O2" "-O2 -g" "-O2 -flto" "-O2 -g -flto"; do
	d="$T/${flags// /}"
	# shellcheck disable=SC2086
	build_clones "$d" $flags
	f="$d/clones"
	site_in_copy "$f" part__site '^part_fn\.part\.[0-9]+$'
	site_in_copy "$f" isra__site '^isra_fn\..*isra\.[0-9]+$'
	site_in_copy "$f" constprop__site '^constprop_fn\.constprop\.[0-9]+$'
	site_in_copy "$f" cold__site '^cold_fn\.cold$'
	site_in_copy "$f" label__site '^lt_asm_named\.constprop\.[0-9]+$'
	case $flags in
	*-flto*)
		site_in_copy "$f" lto__site__a '^helper\.lto_priv\.[0-9]+$'
		site_in_copy "$f" lto__site__b '^helper\.lto_priv\.[0-9]+$'
		;;
	esac

	start_prog "$f"
	rc=0
	"$DTRACE" -l -p "$PID" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "$flags: dtrace -l -p exited $rc"; }
	check_ids "$T/out"
	expected_lines "$PID" "$f" >"$T/expected"
	grep -F " clones " "$T/out" | cut -c7- | sort >"$T/actual"
	diff -u "$T/expected" "$T/actual" >&2 || fail "$flags: listing differs from readelf/nm/addr2line"
	for fn in part_fn:part-site isra_fn:isra-site constprop_fn:constprop-site cold_fn:cold-site \
		helper:lto-site-a helper:lto-site-b; do
		expect_grep "^ +[0-9]+ +ltclone$PID +clones +${fn%%:*} ${fn#*:}$" "$T/out" "$flags: ${fn#*:}"
	done
	if [[ $flags == *-g* ]]; then
		expect_grep " label_fn label-site$" "$T/out" "$flags: DWARF's name of the copy's origin"
	else
		expect_grep " lt_asm_named label-site$" "$T/out" "$flags: the symbol without its suffixes"
	fi
	expect_no_grep '\.(part|isra|constprop|cold|lto_priv)' "$T/out" "$flags: a copy's suffix"
	kill "$PID"
	wait "$PID" 2>/dev/null || true
done
echo "PASS"
