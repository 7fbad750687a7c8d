#!/bin/bash
# Probed modules whose .note.stapsdt notes lie: a -G program and a -G shared
# library (two probes each), gcc and clang, copied and broken byte by byte
# (stapsdt.py, which parses the ELF itself): probe addresses beyond every
# PT_LOAD, in a read-only or writable segment, one byte past the code, next
# to the NOP; semaphores in the code, in the bss, beyond every PT_LOAD,
# misaligned; a note whose desc or name runs past its section. The broken
# copies run as usual, their drti registering them with the daemon.
#
# Expected, derived from what was broken: a partly broken module registers
# exactly its intact probes (one event each, LIST's count), a wholly broken
# one nothing; the daemon logs each refusal with the reason class the
# README's trust model gives; no event site is anything but a NOP in the
# file-backed code, no ref_ctr anything but even writable data; the daemon
# serves others throughout; the program's output is that of a disabled run.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helperd/lib.sh"
. "$USDTKIT_SRCDIR/tests/fault/process/lib.sh"
need_tracefs
STAPSDT="$USDTKIT_SRCDIR/tests/fault/process/stapsdt.py"
start_daemon

# A library with two probes, call and back, exporting lib_call (app.c's dlopen).
build_mlib() { # CC
	local cc=$1
	mkdir -p "$B/mlib"
	printf 'provider %smlib {\n\tprobe call(int x);\n\tprobe back(int x);\n};\n' "$P" >"$B/mlib/mlib.d"
	cat >"$B/mlib/mlib.c" <<EOF
#include "mlib.h"
void lib_call(int x);
void lib_call(int x)
{
	${PU}MLIB_CALL(x);
	${PU}MLIB_BACK(x + 1);
}
EOF
	(
		cd "$B/mlib"
		"$DTRACE" -h -s mlib.d -o mlib.h
		$cc -I"$SDT_INC" -I. -O2 -fPIC -c mlib.c -o mlib.o
		CC="$cc" "$DTRACE" -G -s mlib.d -o mlib-prov.o mlib.o
		$cc -shared mlib.o mlib-prov.o -o libm.so
	) || fail "building the two-probe library with $cc"
	MLIB="$B/mlib/libm.so"
}

# Every site of our events in FILE must be sane (stapsdt.py check-sites).
sites_sane() { # file what
	grep -E "^[pr]:sdt_${P}" <(uprobe_events) | python3 "$STAPSDT" check-sites "$1" "$(event_path "$1")" ||
		fail "$2: an event site outside the file's code or data"
}
# Our events of one group, as sorted event names on one line.
group_events() { our_events | sed -n "s|^sdt_$1/||p" | sort | tr '\n' ' '; }
# The names of the notes of FILE not in the given indices, sorted, on one line.
intact() { # file index...
	local f=$1
	shift
	python3 "$STAPSDT" list "$f" | awk -v skip=" $* " 'index(skip, " " $1 " ") == 0 {print $3}' |
		sort -u | tr '\n' ' '
}
# LIST's probe count of the module FILE (empty: not registered).
list_count() { list_entries | awk -v f="$1" '$7 == f {print $3}'; }

# t-fault-notes-outside.sh [CC...]: meson runs one test per compiler, which
# run side by side (the 22 mutations of each take half a minute).
nruns=0
for cc in ${*:-$COMPILERS}; do
	build_progs "$cc"
	build_mlib "$cc"
	served_ok "$cc: at start"
	M="$T/mut-$cc"
	mkdir -p "$M"
	python3 "$STAPSDT" list "$PROG" >"$M/prog.notes"
	python3 "$STAPSDT" list "$MLIB" >"$M/lib.notes"
	expect_eq "$(awk '{print $3}' "$M/prog.notes" | sort | tr '\n' ' ')" "start tick " "$cc: the program's notes"
	expect_eq "$(awk '{print $3}' "$M/lib.notes" | sort | tr '\n' ' ')" "back call " "$cc: the library's notes"
	# Each mutation breaks one note; the overruns break the last one (the
	# reader cannot go past a bad header), the others the first.
	for kind in pc-outside pc-rodata pc-data pc-past-text pc-not-nop sema-text sema-bss \
		sema-outside sema-misaligned desc-overrun name-overrun; do
		case $kind in
		*-overrun) pi=$(($(wc -l <"$M/prog.notes") - 1)) li=$(($(wc -l <"$M/lib.notes") - 1)) ;;
		*) pi=0 li=0 ;;
		esac
		prog="$M/prog-$kind" lib="$M/lib-$kind.so"
		python3 "$STAPSDT" mutate "$PROG" "$prog" "$pi=$kind" >"$M/why.prog"
		python3 "$STAPSDT" mutate "$MLIB" "$lib" "$li=$kind" >"$M/why.lib"
		want_prog=$(intact "$prog" "$pi")
		want_lib=$(intact "$MLIB" "$li")
		pname=$(awk -v i="$pi" '$1 == i {print $2 ":" $3}' "$M/prog.notes")
		lname=$(awk -v i="$li" '$1 == i {print $2 ":" $3}' "$M/lib.notes")
		why=$(awk '{print $3}' "$M/why.prog")

		pstart run "$prog"
		wait_events "$(echo $want_prog | wc -w)" "$cc $kind: the program's intact probes"
		expect_eq "$(group_events "${P}app")" "$want_prog" "$cc $kind: the program's events"
		expect_eq "$(list_count "$prog")" "$(echo $want_prog | wc -w)" "$cc $kind: LIST's probe count"
		sites_sane "$prog" "$cc $kind: program"
		pcmd run "dlopen $lib"
		prog_wait run '^dlopen ok'
		wait_events "$(($(echo $want_prog $want_lib | wc -w)))" "$cc $kind: the library's intact probes"
		expect_eq "$(group_events "${P}mlib")" "$want_lib" "$cc $kind: the library's events"
		sites_sane "$lib" "$cc $kind: library"
		if [ "$why" = bad-note-header ]; then
			expect_grep "probe \\?:\\? rejected: bad-note-header: " "$DLOG.new" "$cc $kind: logged"
		else
			expect_grep "probe $pname rejected: $why: " "$DLOG.new" "$cc $kind: the program's refusal logged"
			expect_grep "probe $lname rejected: $why: " "$DLOG.new" "$cc $kind: the library's refusal logged"
		fi
		pcmd run "fire 2"
		prog_wait run '^fired 2'
		pcmd run dlclose
		prog_wait run '^dlclose'
		pcmd run exit
		pstop run
		wait_events 0 "$cc $kind: after exit"
		same_as_disabled run
		nruns=$((nruns + 1))
		echo "ok: $cc $kind ($why): program registered [$want_prog], library [$want_lib]"
	done
	served_ok "$cc: after the partly broken modules"

	# Wholly broken: every note of each module broken, one way or another.
	prog="$M/prog-all" lib="$M/lib-all.so"
	python3 "$STAPSDT" mutate "$PROG" "$prog" 0=pc-outside 1=sema-misaligned >/dev/null
	python3 "$STAPSDT" mutate "$MLIB" "$lib" 0=pc-not-nop 1=sema-bss >/dev/null
	pstart run "$prog"
	wait_log "REGISTER pid $PID_run $DONE" "$cc: the broken program's request"
	pcmd run "dlopen $lib"
	prog_wait run '^dlopen ok'
	served_ok "$cc: beside wholly broken modules"
	wait_log_count "REGISTER pid $PID_run $DONE" 2 "$cc: the broken library's request"
	expect_eq "$(count_log "REGISTER pid $PID_run ${REG_AT}/")" 0 \
		"$cc: wholly broken modules registered"
	# served_ok's probed program has exited, but its events go only once the
	# daemon has seen that: wait for them, then nothing may remain.
	wait_events 0 "$cc: events of wholly broken modules"
	expect_eq "$(list_entries | grep -c " $PID_run " || true)" 0 "$cc: LIST entries of the broken program"
	for p in "$(sed -n '1p' "$M/prog.notes" | awk '{print $2 ":" $3}') rejected: pc-outside-code" \
		"$(sed -n '2p' "$M/prog.notes" | awk '{print $2 ":" $3}') rejected: semaphore-misaligned" \
		"$(sed -n '1p' "$M/lib.notes" | awk '{print $2 ":" $3}') rejected: pc-not-nop" \
		"$(sed -n '2p' "$M/lib.notes" | awk '{print $2 ":" $3}') rejected: semaphore-outside-data"; do
		expect_grep "probe $p: " "$DLOG.new" "$cc: wholly broken: refusal logged"
	done
	pcmd run "fire 1"
	prog_wait run '^fired 1'
	pcmd run exit
	pstop run
	same_as_disabled run
	echo "ok: $cc: wholly broken program and library: nothing registered, each refusal logged"
done
[ -z "$(list_entries)" ] || { list_entries >&2; fail "registry entries left"; }
served_ok "at the end"
echo "$nruns partly broken program+library runs"
HD_OK=1
