#!/bin/bash
# dtrace -l -v: after each probe line, DTrace's block of stability
# attributes and argument types. Types are the .d's as written (translated
# ones as args[N], the native ones too when a probe translates), attributes
# the #pragma D attributes of the .d: the probe description's are the least
# of the provider, module, function and name sets, component by component
# (dt_probe_info), the argument attributes the args set; without a pragma,
# DTrace's default Private/Private/Unknown. Probes without a metadata note
# (plain STAP_PROBE, no -G) get integer types of the sizes in their notes,
# as readelf shows them.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/list/lib.sh"

# attrs TITLE NAMES DATA CLASS: one attribute block as print_probe_info prints it.
attrs() {
	printf '\n\t%s\n\t\tIdentifier Names: %s\n\t\tData Semantics:   %s\n\t\tDependency Class: %s\n' \
		"$1" "$2" "$3" "$4"
}

# block OUT PROVIDER FUNCTION NAME: the -v block that follows that probe's line.
block() {
	awk -v p="$2" -v f="$3" -v n="$4" '
		/^ +[0-9]+ / { on = ($2 == p && $(NF - 1) == f && $NF == n); next }
		on { print }' "$1"
}

check_block() { # label out provider function name expected-file
	block "$2" "$3" "$4" "$5" >"$T/got"
	diff -u "$6" "$T/got" >&2 || fail "$1: -v block of $3:$4:$5"
}

# The attribute sets app.d declares, by the rule above:
#   provider, module, function Evolving/Evolving/Common; name Stable/Evolving/ISA
#   -> description Evolving/Evolving/ISA; args Stable/Stable/Common.
app_attrs() {
	attrs "Probe Description Attributes" Evolving Evolving ISA
	attrs "Argument Attributes" Stable Stable Common
	printf '\n\tArgument Types\n'
}
default_attrs() {
	attrs "Probe Description Attributes" Private Private Unknown
	attrs "Argument Attributes" Private Private Unknown
	printf '\n\tArgument Types\n'
}

for cc in gcc clang; do
	d="$T/$cc"
	build_app "$d" $cc -O2 -g
	start_prog "$d/app"
	"$DTRACE" -l -v -p "$PID" >"$T/out" || fail "$cc: dtrace -l -v -p exited $?"
	grep -E '^( +ID| +[0-9]+ )' "$T/out" >"$T/lines"
	check_ids "$T/lines"

	# The probe lines are those of -l.
	"$DTRACE" -l -p "$PID" >"$T/plain"
	diff -u "$T/plain" "$T/lines" >&2 ||
		fail "$cc: -v changed the probe lines"

	{ app_attrs; printf '\t\targs[0]: int\n\t\targs[1]: const char *\n\n'; } >"$T/exp"
	check_block $cc "$T/out" "ltapp$PID" handle_request request-start "$T/exp"
	check_block $cc "$T/out" "ltapp$PID" other_entry request-start "$T/exp"

	{
		app_attrs
		printf '\t\targs[0]: long\n\t\targs[1]: int\n'
		printf '\n\tNative Argument Types\n\t\targ0: int\n\t\targ1: long\n\n'
	} >"$T/exp"
	check_block $cc "$T/out" "ltapp$PID" handle_request request-done "$T/exp"

	{ app_attrs; printf '\t\targs[0]: unsigned int\n\n'; } >"$T/exp"
	check_block $cc "$T/out" "ltapp$PID" inlined_helper inlined-site "$T/exp"

	{ app_attrs; printf '\t\tNone\n\n'; } >"$T/exp"
	check_block $cc "$T/out" "ltapp$PID" other_entry no_args "$T/exp"

	{ default_attrs; printf '\t\targs[0]: int\n\t\targs[1]: char *\n\n'; } >"$T/exp"
	check_block $cc "$T/out" "ltlib$PID" lib_work work-item "$T/exp"
	kill "$PID"
done

# No metadata note: the types from the notes' sizes, per readelf (-m32:
# unsigned long is 4 bytes there; built and read always, run where the
# kernel runs 32-bit programs).
for v in gcc clang gcc-m32; do
	cc=${v%-m32}
	if [ "$v" = gcc-m32 ]; then
		build_stap "$T/stap-$v" $cc -m32 -I"$SDT_INC"
		readelf -h "$T/stap-$v/stap" | grep -q 'Class: *ELF32' || fail "$v: not a 32-bit program"
	else
		build_stap "$T/stap-$v" $cc
	fi
	args=$(readelf -n "$T/stap-$v/stap" |
		awk '/Name: event__four/ { on = 1; next } on && /Arguments:/ { sub(/.*Arguments: */, ""); print; exit }')
	[ "$(echo "$args" | wc -w)" = 4 ] || fail "readelf shows event__four with arguments '$args'"
	{
		default_attrs
		i=0
		for a in $args; do
			sz=${a%%@*}
			t=uint
			case $sz in -*) t=int sz=${sz#-} ;; esac
			printf '\t\targs[%d]: %s%d_t\n' $i $t $((sz * 8))
			i=$((i + 1))
		done
		printf '\n'
	} >"$T/exp"
	# stap.c passes int, unsigned long, signed char, unsigned short.
	lng=uint64_t
	[ "$v" = gcc-m32 ] && lng=uint32_t
	grep -q 'args\[0\]: int32_t' "$T/exp" && grep -q "args\[1\]: $lng" "$T/exp" ||
		fail "$v: the reference types of stap.c look wrong"
	if [ "$v" = gcc-m32 ] && ! can_exec_m32; then
		echo "note: $v: $M32_NO_EXEC"
		continue
	fi
	start_prog "$T/stap-$v/stap"
	"$DTRACE" -l -v -p "$PID" >"$T/out" || fail "$v: dtrace -l -v on STAP_PROBE exited $?"
	check_block "$v stap" "$T/out" "ltstap$PID" stap_fn event-four "$T/exp"
	{ default_attrs; printf '\t\tNone\n\n'; } >"$T/exp"
	check_block "$v stap" "$T/out" "ltstap$PID" stap_fn event-none "$T/exp"
	kill "$PID"
done
echo "PASS"
