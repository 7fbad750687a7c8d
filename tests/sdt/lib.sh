# Shared by the sdt tests: build the probe test program (probes.c, guarded.c, main.c) in one
# configuration and check it with readelf, gdb and bpftrace. Source after common.sh.

SDT_DIR="$USDTKIT_SRCDIR/tests/sdt"
# (a function and an array: the checkout's path may hold a space)
sdt_check() { python3 "$SDT_DIR/check.py" "$@"; }
SDT_SRCS=("$SDT_DIR/probes.c" "$SDT_DIR/guarded.c" "$SDT_DIR/main.c")

# require_stap_sdt: SystemTap's <sys/sdt.h>, the reference, is the one on the default include
# path; STAP_SDT_H is its path.
require_stap_sdt() {
	STAP_SDT_H=$(echo '#include <sys/sdt.h>' | cpp -H -o /dev/null 2>&1 | sed -n 's/^\. //p' |
		head -1)
	[ -n "$STAP_SDT_H" ] && grep -q 'Systemtap static probe' "$STAP_SDT_H" ||
		fail "SystemTap's sys/sdt.h (systemtap-sdt-dev) is not on the default include path"
}

# A bpftrace still running when the test exits (only ever the one we started).
BT_PID=
at_exit '[ -n "$BT_PID" ] && kill -INT $BT_PID 2>/dev/null'

# build_probes CC KIND DIR CFLAGS...: KIND is pie, nopie, static or shared. Sets PROG (what to
# run) and ELF (the file holding the notes: the program, or the shared library).
build_probes() {
	local cc=$1 kind=$2 dir=$3
	shift 3
	mkdir -p "$dir"
	case $kind in
	pie) $cc -I"$SDT_INC" "$@" -fPIE -pie "${SDT_SRCS[@]}" -o "$dir/prog" ;;
	nopie) $cc -I"$SDT_INC" "$@" -fno-pie -no-pie "${SDT_SRCS[@]}" -o "$dir/prog" ;;
	static) $cc -I"$SDT_INC" "$@" -static "${SDT_SRCS[@]}" -o "$dir/prog" ;;
	shared)
		$cc -I"$SDT_INC" "$@" -fPIC -shared "$SDT_DIR/probes.c" "$SDT_DIR/guarded.c" \
			-o "$dir/libsdttest.so"
		$cc "$@" "$SDT_DIR/main.c" -L"$dir" -lsdttest -Wl,-rpath,"$dir" -o "$dir/prog"
		;;
	*) fail "build_probes: unknown kind $kind" ;;
	esac || fail "build failed: $cc $kind $*"
	PROG="$dir/prog"
	ELF="$dir/prog"
	[ "$kind" = shared ] && ELF="$dir/libsdttest.so"
	return 0
}

# check_notes ARCH DIR: run the program once for its expectations, then compare the notes.
check_notes() {
	local arch=$1 dir=$2
	"$PROG" "$dir/exp" guarded || fail "$PROG exited with $?"
	sdt_check notes "$arch" "$ELF" "$dir/exp" || fail "notes of $ELF (see above)"
}

# check_gdb DIR: gdb stops at every probe; $_probe_argN equal what the program passed.
# (Its bounds, and check_bpftrace's, are upper bounds scaled by TIME_FACTOR, lib/common.sh:
# under the emulated arm64 machine, tests/arm64, gdb alone takes minutes.)
check_gdb() {
	local dir=$1
	sdt_check gen-gdb "$dir/exp" >"$dir/gdb.cmd"
	# gdb writes the expectations of its own run (addresses differ from run to run).
	timeout -k 10 $((120 * TIME_FACTOR)) gdb -batch -nx -x "$dir/gdb.cmd" --args "$PROG" "$dir/exp-gdb" \
		>"$dir/gdb.out" 2>&1 || { cat "$dir/gdb.out" >&2; fail "gdb failed on $PROG"; }
	sdt_check gdb "$dir/exp-gdb" "$dir/gdb.out" ||
		{ cat "$dir/gdb.out" >&2; fail "gdb read wrong values"; }
}

# check_bpftrace DIR: one bpftrace run reads arg0..arg5 and strings of every probe, including
# the semaphore-guarded one, which the program fires only if it sees its semaphore set.
# bpftrace attaches by path (not -c: bpftrace 0.17 looks a library up in the child's maps
# before the child has loaded it); its BEGIN runs once every probe is attached, and only
# then is the program started.
check_bpftrace() {
	local dir=$1 bt i
	sdt_check gen-bt "$ELF" "$dir/exp" >"$dir/probes.bt"
	echo 'BEGIN { printf("@@attached\n"); }' >>"$dir/probes.bt"
	timeout -k 10 $((120 * TIME_FACTOR)) bpftrace "$dir/probes.bt" >"$dir/bt.out" 2>&1 &
	bt=$!
	BT_PID=$bt
	for i in $(seq $((300 * TIME_FACTOR))); do
		grep -qs '^@@attached' "$dir/bt.out" && break
		kill -0 $bt 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^@@attached' "$dir/bt.out" || { cat "$dir/bt.out" >&2; fail "bpftrace did not attach"; }
	timeout -k 10 $((60 * TIME_FACTOR)) "$PROG" "$dir/exp-bt" guarded || fail "$PROG exited with $?"
	# the guarded probe fires last: wait (10 s at most) for bpftrace to print it
	for i in $(seq $((100 * TIME_FACTOR))); do
		grep -qs '^@@guarded ' "$dir/bt.out" && break
		sleep 0.1
	done
	# bounded: a signal can be lost on a loaded machine (a run hung here for 20 minutes)
	stop_bg $bt INT 20
	BT_PID=
	sdt_check bt "$dir/exp-bt" "$dir/bt.out" ||
		{ cat "$dir/bt.out" >&2; fail "bpftrace read wrong values"; }
	grep -qE '^#semaphore [1-9][0-9]* fired 1$' "$dir/exp-bt" ||
		fail "guarded probe's semaphore not set under bpftrace: $(grep '^#sema' "$dir/exp-bt")"
}
