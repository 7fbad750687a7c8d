#!/bin/bash
# dtrace -l -p PID lists exactly the probes of a live process, read directly
# (no daemon): provider + pid, the .d's probe names with '-' for '__', the
# basename of each module (the program, its shared library), and the
# function of every site as nm names it, or, for a site inlined at -O2 -g,
# the inlined function as addr2line -i names it. Built with gcc and clang,
# with and without debug information, C and C++ (mangled names, and
# libstdc++'s own probes); run from a directory and under a name
# with spaces; a program whose file was deleted while it runs; a program
# with plain SystemTap probes and no -G.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/list/lib.sh"

# expected_for_pid PID [DELETED-COPY]: the lines of every file PID maps,
# each read by the reference tools; a deleted file is read from its copy.
expected_for_pid() {
	local pid=$1 copy=${2:-} path
	sed -E 's/^([^ ]+ +){5}//' "/proc/$pid/maps" | grep '^/' | sort -u |
		while IFS= read -r path; do
			case $path in
			*' (deleted)')
				[ -n "$copy" ] || fail "unexpected deleted mapping $path"
				expected_lines "$pid" "$copy" "$(basename "${path% (deleted)}")"
				;;
			*) [ -f "$path" ] && expected_lines "$pid" "$path" ;;
			esac
		done | sort
}

# check_listing LABEL [DELETED-COPY]: dtrace -l -p $PID against the reference.
check_listing() {
	local label=$1 rc=0
	"$DTRACE" -l -p "$PID" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "$label: dtrace -l -p exited $rc"; }
	[ -s "$T/err" ] && { cat "$T/err" >&2; fail "$label: dtrace -l -p wrote to stderr"; }
	check_ids "$T/out"
	expected_for_pid "$PID" "${2:-}" >"$T/expected"
	[ -s "$T/expected" ] || fail "$label: the reference tools found no probe at all"
	listing_lines "$T/out" >"$T/actual"
	diff -u "$T/expected" "$T/actual" >&2 || fail "$label: listing differs from readelf/nm/addr2line"
}

# The provider's probe names in the listing are exactly the .d's (with a site).
check_names() { # label provider d-file
	tail -n +2 "$T/out" | awk -v p="$2$PID" '$2 == p { print $NF }' | sort -u >"$T/names"
	d_probe_names "$3" >"$T/dnames"
	diff -u "$T/dnames" "$T/names" >&2 || fail "$1: $2's probes are not the .d's"
}

# How many probe sites of FILE addr2line -i sees inlined.
inlined_sites() {
	local p n pc c=0
	while read -r p n pc; do
		[ "$(pc_frames "$1" "$pc" | wc -l)" -gt 1 ] && c=$((c + 1))
	done < <(note_sites "$1")
	echo $c
}

for cc in gcc clang; do
	for dbg in g nog; do
		flags="-O2"
		[ $dbg = g ] && flags="-O2 -g"
		d="$T/$cc $dbg/dir with spaces"
		# shellcheck disable=SC2086
		build_app "$d" $cc $flags
		cp "$d/app" "$d/my app"
		start_prog "$d/my app"
		check_listing "$cc $flags"
		check_names "$cc $flags" ltapp "$PROGS/app.d"
		check_names "$cc $flags" ltlib "$PROGS/lib.d"
		expect_grep "^ +[0-9]+ +ltapp$PID +my app +handle_request request-start$" "$T/out" \
			"$cc $flags: the program is listed under its basename, spaces kept"
		expect_grep "^ +[0-9]+ +ltlib$PID +libltlib.so +lib_work work-item$" "$T/out" \
			"$cc $flags: the shared library's probe"
		if [ $dbg = g ]; then
			[ "$(inlined_sites "$d/my app")" -gt 0 ] ||
				fail "$cc $flags did not inline inlined_helper: nothing tests inlined sites"
			expect_grep " inlined_helper inlined-site$" "$T/out" \
				"$cc $flags: an inlined site is named after the inlined function"
		else
			expect_no_grep "inlined_helper" "$T/out" \
				"$cc $flags: without DWARF the enclosing symbol names an inlined site"
		fi
		kill "$PID"
		wait "$PID" 2>/dev/null || true
	done
done

# A binary deleted while it runs: still listed, under its own name.
d="$T/deleted"
build_app "$d" gcc -O2 -g
cp "$d/app" "$T/app-copy"
start_prog "$d/app"
rm "$d/app"
grep -q 'app (deleted)' "/proc/$PID/maps" || fail "the deleted binary is not shown deleted in maps"
check_listing "deleted binary" "$T/app-copy"
expect_no_grep "deleted" "$T/out" "the module name of a deleted binary"
check_names "deleted binary" ltapp "$PROGS/app.d"
kill "$PID"

# Plain SystemTap probes, no .d, no -G; and a 32-bit process (x86-64 only:
# built always, run where the kernel runs 32-bit programs).
vs="gcc clang"
[ "$(uname -m)" = x86_64 ] && vs="$vs gcc-m32"
for v in $vs; do
	cc=${v%-m32}
	if [ "$v" = gcc-m32 ]; then
		build_stap "$T/stap-$v" $cc -m32 -I"$SDT_INC"
		readelf -h "$T/stap-$v/stap" | grep -q 'Class: *ELF32' || fail "$v: not a 32-bit program"
		if ! can_exec_m32; then
			echo "note: $v: $M32_NO_EXEC"
			continue
		fi
	else
		build_stap "$T/stap-$v" $cc
	fi
	start_prog "$T/stap-$v/stap"
	check_listing "STAP_PROBE with $v"
	expect_grep "^ +[0-9]+ +ltstap$PID +stap +stap_fn event-four$" "$T/out" "STAP_PROBE4 site"
	expect_grep "^ +[0-9]+ +ltstap$PID +stap +stap_fn event-none$" "$T/out" "STAP_PROBE site"
	kill "$PID"
done
# C++: mangled names, as the symbol table spells them (the inlined member
# function too), and libstdc++'s own probes with names from .dynsym only.
for cxx in g++ clang++; do
	build_cxx "$T/cxx-$cxx" $cxx
	start_prog "$T/cxx-$cxx/cxx"
	check_listing "C++ with $cxx"
	expect_grep "^ +[0-9]+ +ltcxx$PID +cxx +_ZN2ns6Worker4stepEi step$" "$T/out" \
		"$cxx: the inlined member function, mangled"
	[ "$(grep -c " tmpl$" "$T/out")" = 2 ] || fail "$cxx: one line per template instance"
	kill "$PID"
done

# Without privilege: /proc/PID/map_files cannot be opened, so each mapped
# path is opened instead and used because it is the mapped file. The
# program and dtrace (a copy: the build tree may be private) run as nobody.
command -v setpriv >/dev/null || fail "setpriv is not installed (util-linux)"
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
d="$T/unpriv"
build_app "$d" gcc -O2 -g
cp "$DTRACE" "$d/dtrace"
chmod a+rx "$T"
chmod -R a+rX "$d"
chmod a+w "$d"
ready="$d/ready"
USDTKIT_HELPER_SOCKET="$NO_DAEMON_SOCK" $NOBODY "$d/app" "$ready" &
PID=$!
at_exit "kill $PID 2>/dev/null"
for i in $(seq 200); do [ -e "$ready" ] && break; sleep 0.05; done
[ -e "$ready" ] || fail "the program did not start as nobody"
$NOBODY "$d/dtrace" -l -p "$PID" >"$T/out" 2>"$T/err" || { cat "$T/err" >&2; fail "unprivileged dtrace -l -p exited $?"; }
[ -s "$T/err" ] && { cat "$T/err" >&2; fail "unprivileged: unexpected stderr"; }
check_ids "$T/out"
expected_for_pid "$PID" >"$T/expected"
listing_lines "$T/out" >"$T/actual"
diff -u "$T/expected" "$T/actual" >&2 || fail "unprivileged: listing differs from readelf/nm/addr2line"
# Another user's process cannot be read: DTrace's message, exit 1.
rc=0
$NOBODY "$d/dtrace" -l -p 1 >"$T/out" 2>"$T/err" || rc=$?
expect_eq "$rc" 1 "unprivileged listing of pid 1: exit status"
expect_eq "$(cat "$T/err")" "dtrace: failed to grab pid 1: Permission denied" "unprivileged, pid 1"
kill "$PID"
echo "PASS"
