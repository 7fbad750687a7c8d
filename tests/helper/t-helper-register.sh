#!/bin/bash
# `usdtkit-probes register` / `unregister` against the real kernel:
#  - the events appear in uprobe_events at the file offsets and ref_ctr
#    offsets computed from readelf (sdtcheck.py expect-events);
#  - enabled in a private tracefs instance while the program runs, they fire
#    with the values the program passed (each integer width, both signs, an
#    immediate, a string through ustring), and the program sees its
#    semaphore go 0 -> 1 -> 0;
#  - unregister removes exactly our sites: an event of another group on the
#    same site survives.
# The -m32 variants are registered and unregistered always; they are run
# (and their events fired) where the kernel runs 32-bit programs.
set -eu
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/helper/lib.sh"
need_tracefs

inst="$TRACEFS/instances/usdtkit_helper_$$"
keep="usdtkit_keep_$$/keep"
events="vals twice nosema plain"
# Every one of $events has fired into $inst's trace, twice at both its sites
# (what the checks below read).
fired_while_enabled() {
	local e
	for e in $events; do grep -q " $e: " "$inst/trace" || return 1; done
	grep -qE ' twice: \(0x[0-9a-f]+\) arg1=-[1-9]' "$inst/trace" &&
		grep -qE ' twice: \(0x[0-9a-f]+\) arg1=[1-9]' "$inst/trace"
}
cleanup() {
	for e in $events; do
		[ -e "$inst/events/sdt_$HPROV/$e/enable" ] && echo 0 >"$inst/events/sdt_$HPROV/$e/enable"
	done
	[ -d "$inst" ] && rmdir "$inst"
	remove_uprobe_event "$keep"
	[ -n "${PFILE:-}" ] && "$PROBES" unregister "$PFILE" >/dev/null 2>&1
	return 0
}
at_exit cleanup

# The values the program passes (see progs/probes.c), and what ftrace must print.
values="-5 -1234 -123456789 -1234567890123 250 65000 4000000000 18000000000000000000"
want_vals='arg1=-5 arg2=-1234 arg3=-123456789 arg4=-1234567890123 arg5=250 arg6=65000 arg7=4000000000 arg8=18000000000000000000 arg9="hello-world" arg10=42'

# SECONDS is an upper bound for something that comes: scaled by TIME_FACTOR.
wait_for() { # pattern file seconds
	local i
	for i in $(seq 1 $(($3 * 20 * TIME_FACTOR))); do
		grep -qE -- "$1" "$2" && return 0
		sleep 0.05
	done
	return 1
}

run_variant() {
	local v=$1 path log stop line
	build_variant "$v" || fail "$v: the test program does not build"

	# arg9 is a char *: fetched as a string, except an i386 pointer held in
	# memory, which the kernel's 8-byte nested fetch cannot follow (names.c).
	local a9 strarg="-s $HPROV:vals:9" want=$want_vals
	a9=$(readelf -n "$PFILE" | awk '/Name: vals$/ { f = 1 } f && /Arguments:/ { print $10; exit }')
	if readelf -h "$PFILE" | grep -q 'Class: *ELF32' && [ "${a9#*(}" != "$a9" ]; then
		strarg=""
		want=${want_vals/arg9=\"hello-world\"/arg9=[0-9]+}
	fi
	# shellcheck disable=SC2086
	"$PROBES" register $strarg "$PFILE" >"$T/$v.reg" || { cat "$T/$v.reg"; fail "$v: register"; }
	# The name the events carry: $T is in /tmp, writable by all, so never the
	# path itself but the alias usdtkit-probes made (and says so).
	path=$(sed -n 's/^alias //p' "$T/$v.reg")
	expect_eq "$path" "$(event_path "$PFILE")" "$v: the name of the events"
	python3 "$SDTCHECK" expect-events "$PFILE" >"$T/$v.want"
	[ -s "$T/$v.want" ] || fail "$v: readelf finds no probes"
	# Every site at its readelf-derived offset, with its semaphore as ref_ctr.
	while read -r group event off ref; do
		if [ "$ref" = 0x0 ]; then
			line=$(printf 'p:%s/%s %s:0x%016x( |$)' "$group" "$event" "$path" "$off")
		else
			line=$(printf 'p:%s/%s %s:0x%016x\\(0x%x\\)( |$)' "$group" "$event" "$path" "$off" "$ref")
		fi
		expect_grep "^$line" "$TRACEFS/uprobe_events" "$v: $group/$event at $off"
	done <"$T/$v.want"
	[ -z "$strarg" ] ||
		expect_grep "^p:sdt_$HPROV/vals .* arg9=\+0\((%[a-z0-9]+|[-+][0-9]+\(%[a-z0-9]+\))\):ustring" \
			"$TRACEFS/uprobe_events" "$v: the string argument fetched as ustring"
	# Registering again changes nothing and says so.
	# shellcheck disable=SC2086
	"$PROBES" register $strarg "$PFILE" >"$T/$v.reg2" || { cat "$T/$v.reg2"; fail "$v: second register"; }
	expect_no_grep '^\+ ' "$T/$v.reg2" "$v: second register created something"
	if readelf -h "$PROG" | grep -q 'Class: *ELF32' && ! can_exec_m32; then
		"$PROBES" unregister "$PFILE" >"$T/$v.unreg" || { cat "$T/$v.unreg"; fail "$v: unregister"; }
		expect_no_grep "^p:sdt_$HPROV/[a-z]+ $path:" "$TRACEFS/uprobe_events" \
			"$v: events left after unregister"
		[ "$(grep -c '^- ' "$T/$v.unreg")" -eq "$(wc -l <"$T/$v.want")" ] ||
			fail "$v: unregister removed $(grep -c '^- ' "$T/$v.unreg") sites, the file has $(wc -l <"$T/$v.want")"
		echo "ok $v: registered and unregistered (not run: $M32_NO_EXEC)"
		return 0
	fi

	# Another group's event on the vals site (same ref_ctr, as the kernel requires).
	read -r _ _ off ref < <(grep "^sdt_$HPROV vals " "$T/$v.want")
	echo "p:$keep $path:$off($ref)" >>"$TRACEFS/uprobe_events" || fail "$v: cannot create $keep"

	mkdir "$inst"
	echo 0 >"$inst/tracing_on"
	echo 1 >"$inst/tracing_on"
	log="$T/$v.out"
	stop="$T/$v.stop"
	# 400 iterations of 50 ms (20 s, scaled: under the emulated arm64
	# machine, tests/arm64, the steps below took longer than 20 s and the
	# program had ended before the disable); the stop file ends it.
	# shellcheck disable=SC2086
	"$PROG" $((400 * TIME_FACTOR)) "$stop" hello-world $values >"$log" &
	local pid=$!
	at_exit "touch '$stop'"
	wait_for '^sema=0' "$log" 5 || fail "$v: the program did not start"
	for e in $events; do echo 1 >"$inst/events/sdt_$HPROV/$e/enable"; done
	wait_for '^sema=1' "$log" 5 || fail "$v: the semaphore never became 1 while enabled"
	wait_until 10 "$v: every enabled event to fire (twice at both sites)" fired_while_enabled
	for e in $events; do echo 0 >"$inst/events/sdt_$HPROV/$e/enable"; done
	local from=$(($(wc -l <"$log") + 1)) i
	for i in $(seq 1 $((100 * TIME_FACTOR))); do
		tail -n +"$from" "$log" | grep -q '^sema=0' && break
		running "$pid" || break
		sleep 0.05
	done
	tail -n +"$from" "$log" | grep -q '^sema=0' || {
		running "$pid" || fail "$v: the program ended before it printed its semaphore after the disable"
		fail "$v: the semaphore stayed 1 after disable"
	}
	touch "$stop"
	wait "$pid" || fail "$v: the program failed"
	cp "$inst/trace" "$T/$v.trace"
	rmdir "$inst"

	expect_grep " vals: \(0x[0-9a-f]+\) $want\$" "$T/$v.trace" "$v: vals fired with the program's values"
	expect_grep ' twice: \(0x[0-9a-f]+\) arg1=-[1-9][0-9]*$' "$T/$v.trace" "$v: twice, first site"
	expect_grep ' twice: \(0x[0-9a-f]+\) arg1=[1-9][0-9]*$' "$T/$v.trace" "$v: twice, second site"
	expect_grep ' nosema: \(0x[0-9a-f]+\) arg1=([0-9]+) arg2=' "$T/$v.trace" "$v: nosema fired"
	# nosema's second argument is 3 times its first.
	awk '/ nosema: / { split($0, a, "arg1="); split(a[2], b, " arg2="); if (b[2] != 3 * b[1]) bad = 1; n++ }
	     END { exit !(n > 0 && !bad) }' "$T/$v.trace" || fail "$v: nosema arg2 != 3 * arg1"
	expect_grep ' plain: \(0x[0-9a-f]+\)$' "$T/$v.trace" "$v: plain fired"
	# Two sites of twice fired under one event (the kernel appended them).
	[ "$(grep -c "^p:sdt_$HPROV/twice $path:" <(uprobe_events))" -eq 2 ] ||
		fail "$v: twice's two sites are not both in sdt_$HPROV/twice"

	"$PROBES" unregister "$PFILE" >"$T/$v.unreg" || { cat "$T/$v.unreg"; fail "$v: unregister"; }
	expect_no_grep "^p:sdt_$HPROV/[a-z]+ $path:" "$TRACEFS/uprobe_events" "$v: events left after unregister"
	expect_grep "^p:$keep $path:" "$TRACEFS/uprobe_events" "$v: another group's event was removed"
	[ "$(grep -c '^- ' "$T/$v.unreg")" -eq "$(wc -l <"$T/$v.want")" ] ||
		fail "$v: unregister removed $(grep -c '^- ' "$T/$v.unreg") sites, the file has $(wc -l <"$T/$v.want")"
	remove_uprobe_event "$keep"
	echo "ok $v: registered, fired with the right values, semaphore 0->1->0, unregistered"
}

variants="gcc-pie clang-nopie gcc-O0 gcc-so"
# 32-bit processes where there are (x86-64; not on arm64).
[ "$(uname -m)" = x86_64 ] && variants="$variants gcc-m32 clang-m32"
for v in $variants; do
	run_variant "$v"
done
# Our include/sys/sdt.h too, when it builds the program (it is being rewritten).
for v in gcc-pie-ours clang-so-ours; do
	if build_variant "$v" 2>"$T/ours.err"; then
		run_variant "$v"
	else
		echo "note: include/sys/sdt.h does not build $v yet: $(tail -1 "$T/ours.err")"
	fi
done

# A path tracefs cannot take literally (a space) is registered through a
# bind-mounted alias; the events fire when the program runs by its real name.
mkdir "$T/with space"
build_variant gcc-pie
cp "$PROG" "$T/with space/prog"
PFILE="$T/with space/prog"
"$PROBES" register "$PFILE" >"$T/space.reg" || { cat "$T/space.reg"; fail "register with a space"; }
alias_path=$(sed -n 's/^alias //p' "$T/space.reg")
[ -n "$alias_path" ] || fail "no alias for a path with a space"
expect_grep "^p:sdt_$HPROV/vals $alias_path:" "$TRACEFS/uprobe_events" "alias path in uprobe_events"
mkdir "$inst"
echo 1 >"$inst/events/sdt_$HPROV/vals/enable"
# shellcheck disable=SC2086
"$PFILE" 3 "$T/nostop" hello-world $values >/dev/null
echo 0 >"$inst/events/sdt_$HPROV/vals/enable"
cp "$inst/trace" "$T/space.trace"
rmdir "$inst"
expect_grep " vals: \(0x[0-9a-f]+\) arg1=-5 " "$T/space.trace" "the aliased file's probe fired"
"$PROBES" unregister "$PFILE" >"$T/space.unreg" || fail "unregister with a space"
expect_no_grep "^p:sdt_$HPROV/[a-z]+ $alias_path:" "$TRACEFS/uprobe_events" "aliased events left"
[ ! -e "$alias_path" ] || fail "alias $alias_path left behind"
echo "ok path with a space: registered through $alias_path"

# An enabled event cannot be removed: EBUSY is reported, nothing is lost.
build_variant gcc-nopie
"$PROBES" register "$PFILE" >/dev/null || fail "register for EBUSY"
mkdir "$inst"
echo 1 >"$inst/events/sdt_$HPROV/plain/enable"
rc=0
"$PROBES" unregister "$PFILE" >"$T/busy.unreg" || rc=$?
expect_eq "$rc" 1 "unregister of an enabled event exit status"
expect_grep "^! -:sdt_$HPROV/plain .*(busy|Busy)" "$T/busy.unreg" "EBUSY reported"
echo 0 >"$inst/events/sdt_$HPROV/plain/enable"
rmdir "$inst"
"$PROBES" unregister "$PFILE" >/dev/null || fail "unregister after disable"
echo "ok EBUSY on an enabled event, removed once disabled"

# Sites of one probe with different argument types cannot share an event: the
# first signature keeps the name, the next gets _2. An event of our name made
# by someone else with another signature is skipped the same way, and survives
# our unregister.
MPROV="hlpm$$"
foreign="sdt_$MPROV/taken"
gcc -O2 -I"$STAP_INC" -DPROV="$MPROV" -o "$T/mixed" "$PROGS/mixed.c"
mixed=$(readlink -f "$T/mixed")
at_exit "remove_uprobe_event sdt_$MPROV/mixed; remove_uprobe_event sdt_$MPROV/mixed_2; remove_uprobe_event sdt_$MPROV/taken_2; remove_uprobe_event $foreign"
if uprobe_event_line "$foreign" >/dev/null; then
	skip "$foreign exists already (another run of this test?)"
fi
reg1=%di
[ "$(uname -m)" = aarch64 ] && reg1=%x0
echo "p:$foreign /bin/true:0x0 arg1=$reg1:u64" >>"$TRACEFS/uprobe_events"
"$PROBES" register "$mixed" >"$T/mixed.reg" || { cat "$T/mixed.reg"; fail "register mixed"; }
mixed=$(event_path "$mixed")
expect_grep "^\+ p:sdt_$MPROV/mixed $mixed:0x[0-9a-f]+ arg1=%[a-z0-9]+:s32$" "$T/mixed.reg" "mixed, int site"
expect_grep "^\+ p:sdt_$MPROV/mixed_2 $mixed:0x[0-9a-f]+ arg1=%[a-z0-9]+:s64$" "$T/mixed.reg" "mixed, long site"
expect_grep "^\+ p:sdt_$MPROV/taken_2 $mixed:" "$T/mixed.reg" "taken skips the foreign signature"
"$PROBES" unregister "$mixed" >"$T/mixed.unreg" || fail "unregister mixed"
expect_no_grep "^p:sdt_$MPROV/[a-z_0-9]+ $mixed:" "$TRACEFS/uprobe_events" "mixed events left"
# unregistered by the alias register printed: the alias goes too
case $mixed in /run/usdtkit/files/*) [ ! -e "$mixed" ] || fail "the alias $mixed is left after unregister" ;; esac
expect_grep "^p:$foreign /bin/true:" "$TRACEFS/uprobe_events" "the foreign event was removed"
remove_uprobe_event "$foreign"
echo "ok differing signatures: mixed, mixed_2; foreign taken skipped to taken_2 and kept"

# The kernel allows one ref_ctr per site: a foreign event on the vals site
# without one makes our vals definition fail (EINVAL, reported); the other
# probes of the file still register. Their group is new, so their lines
# go packed in one write() (lib/tracefs_batch.c), which the kernel stops at
# vals: the batch is written again a line at a time, and the sites the
# batch had made before vals are ours ("+"), not someone else's ("=").
build_variant gcc-pie
# (the group's directory goes a moment after its last event)
_group_gone() { [ ! -e "$TRACEFS/events/sdt_$HPROV" ]; }
poll_until 10 _group_gone || echo "(sdt_$HPROV still there: its lines go one per write)"

path=$(readlink -f "$PFILE")
read -r _ _ off _ < <(python3 "$SDTCHECK" expect-events "$PFILE" | grep "^sdt_$HPROV vals ")
conflict="usdtkit_conflict_$$/x"
at_exit "remove_uprobe_event $conflict"
echo "p:$conflict $path:$off" >>"$TRACEFS/uprobe_events"
rc=0
"$PROBES" register "$PFILE" >"$T/conflict.reg" || rc=$?
expect_eq "$rc" 1 "register with a ref_ctr conflict: exit status"
expect_grep "^! p:sdt_$HPROV/vals .*\(Invalid argument\)\$" "$T/conflict.reg" "the conflict is reported"
[ "$(grep -c '^+ ' "$T/conflict.reg")" -eq 4 ] || { cat "$T/conflict.reg"; fail "the other 4 sites were not registered"; }
expect_no_grep '^= ' "$T/conflict.reg" "a site the failed batch made taken for someone else's"
"$PROBES" unregister "$PFILE" >/dev/null || fail "unregister after conflict"
expect_grep "^p:$conflict " "$TRACEFS/uprobe_events" "the conflicting foreign event was removed"
remove_uprobe_event "$conflict"
echo "ok ref_ctr conflict reported for one site, the others registered"
