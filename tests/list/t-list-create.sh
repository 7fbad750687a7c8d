#!/bin/bash
# dtrace -l -c CMD runs the command (its words split at white space, no
# shell, PATH searched) until the first instruction of main, lists that
# process, and kills it: every probe of the program and of its library (as
# readelf, nm and addr2line see them), a library its own constructor
# dlopen()ed, and never anything of main() (a file main would create stays
# absent); the process is gone when dtrace returns. Built with gcc and
# clang, static, 32-bit and stripped, and one that execs itself again from
# its constructor. $target in -n, -P and -m is the
# command's pid (the first -c, else the first -p), and is refused without
# -c/-p before anything starts. A command that does not exist, cannot run
# or ends on the way gets DTrace's message and exit status 1; dtrace killed
# while it waits takes the command with it.
# shellcheck disable=SC2016 # $target is dtrace's, in single quotes on purpose
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/list/lib.sh"

export USDTKIT_HELPER_SOCKET="$NO_DAEMON_SOCK"

# listed_pid FILE PROVIDER: the pid appended to PROVIDER in a listing.
listed_pid() {
	awk -v p="$2" '$2 ~ "^" p "[0-9]+$" { sub(p, "", $2); print $2; exit }' "$1"
}

# list_c LABEL ARGS...: dtrace -l ARGS into $T/out, which must succeed
# quietly; sets LPID to the listed process of provider $LPROV (default ltapp)
# and checks that main() did not run and, with -c, that the process is gone.
list_c() {
	local label=$1 rc=0
	shift
	rm -f "$T/main-ran"
	"$DTRACE" -l "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "$label: dtrace -l exited $rc"; }
	[ -s "$T/err" ] && { cat "$T/err" >&2; fail "$label: dtrace -l wrote to stderr"; }
	check_ids "$T/out"
	LPID=$(listed_pid "$T/out" "${LPROV:-ltapp}")
	[ -n "$LPID" ] || { cat "$T/out" >&2; fail "$label: no ${LPROV:-ltapp} probe listed"; }
	case " $* " in
	*" -c "*) [ ! -e "/proc/$LPID" ] || fail "$label: the command (pid $LPID) outlived dtrace" ;;
	esac
	[ ! -e "$T/main-ran" ] || fail "$label: main() ran"
}

# expect_fail LABEL STATUS MESSAGE-REGEX ARGS...: dtrace ARGS fails so.
expect_fail() {
	local label=$1 status=$2 msg=$3 rc=0
	shift 3
	"$DTRACE" "$@" >"$T/out" 2>"$T/err" || rc=$?
	expect_eq "$rc" "$status" "$label: exit status"
	expect_grep "$msg" "$T/err" "$label: message"
}

# The program and its library, whole, against the reference tools.
for cc in gcc clang; do
	d="$T/$cc"
	build_app "$d" $cc -O2 -g
	list_c "$cc" -c "$d/app $T/main-ran"
	{
		expected_lines "$LPID" "$d/app"
		expected_lines "$LPID" "$d/libltlib.so"
	} | sort >"$T/expected"
	grep -E "^ +[0-9]+ +(ltapp|ltlib)$LPID " "$T/out" | cut -c7- | sort >"$T/actual"
	diff -u "$T/expected" "$T/actual" >&2 || fail "$cc: listing differs from readelf/nm/addr2line"
	expect_grep "^ +[0-9]+ +ltlib$LPID +libltlib.so +lib_work work-item$" "$T/out" "$cc: the library"
done
APP="$T/gcc/app"

# The program's own constructor ran (it dlopen()ed the library and made a
# mark), main() did not; dynamic, stripped, static, 32-bit (built always, run
# where the kernel runs 32-bit programs); PATH searched.
LPROV=ltctor
mkdir -p "$T/ctor"
gcc -O2 -g -I"$SDT_INC" -o "$T/ctor/ctor" "$PROGS/ctor.c" -ldl || fail "building ctor.c"
cp "$T/ctor/ctor" "$T/ctor/ctor-stripped"
strip "$T/ctor/ctor-stripped"
gcc -O2 -static -I"$SDT_INC" -o "$T/ctor/ctor-static" "$PROGS/ctor.c" 2>/dev/null ||
	fail "building ctor.c -static"
ctors="ctor ctor-stripped ctor-static"
# A 32-bit process where there is one (x86-64; not on arm64): built always,
# run where the kernel runs 32-bit programs.
if [ "$(uname -m)" = x86_64 ]; then
	gcc -O2 -m32 -I"$SDT_INC" -o "$T/ctor/ctor-32" "$PROGS/ctor.c" -ldl || fail "building ctor.c -m32"
	readelf -h "$T/ctor/ctor-32" | grep -q 'Class: *ELF32' || fail "ctor-32 is not a 32-bit program"
	ctors="$ctors ctor-32"
fi
for v in $ctors; do
	if [ $v = ctor-32 ] && ! can_exec_m32; then
		echo "note: $v: $M32_NO_EXEC"
		continue
	fi
	rm -f "$T/ctor-ran"
	plugin=$T/gcc/libltlib.so
	case $v in ctor-static | ctor-32) plugin="" ;; esac
	LT_PLUGIN=$plugin LT_CTOR_MARK="$T/ctor-ran" list_c "$v" -c "$T/ctor/$v $T/main-ran"
	[ -e "$T/ctor-ran" ] || fail "$v: listed before its constructor ran"
	fn="main "
	[ $v = ctor-stripped ] && fn="" # no symbol for main: no function, as nm sees it
	expect_grep "^ +[0-9]+ +ltctor$LPID +$v +${fn}main-entry$" "$T/out" "$v: the program's probe"
	if [ -n "$plugin" ]; then
		expect_grep "^ +[0-9]+ +ltlib$LPID +libltlib.so +lib_work work-item$" "$T/out" \
			"$v: the library its constructor dlopen()ed"
	fi
done
PATH="$T/ctor:$PATH" list_c "PATH search" -c "ctor $T/main-ran"
# A program that execs itself from its constructor: followed to the new image's main.
rm -f "$T/ctor-ran"
LT_CTOR_REEXEC=1 LT_CTOR_MARK="$T/ctor-ran" list_c "exec again" -c "$T/ctor/ctor $T/main-ran"
[ -e "$T/ctor-ran" ] || fail "exec again: listed before the new image's constructor ran"
# No shell: a redirection and a ';' are words given to the program.
list_c "no shell" -c "$T/ctor/ctor $T/main-ran >$T/redir ; touch $T/semicolon"
if [ -e "$T/redir" ] || [ -e "$T/semicolon" ]; then fail "-c went through a shell"; fi
LPROV=ltapp

# $target: the command's pid, in every kind of description.
list_c '$target -n' -c "$APP $T/main-ran" -n 'ltapp$target:::request-start'
expect_eq "$(tail -n +2 "$T/out" | awk '{ print $2, $NF }' | sort -u)" "ltapp$LPID request-start" \
	'-n ltapp$target:::request-start'
expect_eq "$(tail -n +2 "$T/out" | wc -l)" 2 '-n ltapp$target:::request-start: lines'
LPROV=ltlib list_c '$target -P' -c "$APP $T/main-ran" -P 'ltlib$target'
expect_eq "$(tail -n +2 "$T/out" | awk '{ print $2, $3 }' | sort -u)" "ltlib$LPID libltlib.so" \
	'-P ltlib$target'
list_c '$$target -m' -c "$APP $T/main-ran" -m 'ltapp$$target:app'
expect_eq "$(tail -n +2 "$T/out" | awk '{ print $2, $3 }' | sort -u)" "ltapp$LPID app" \
	'-m ltapp$$target:app'
# Two commands: both listed, both gone; $target is the first.
LPROV=ltctor list_c 'two -c' -c "$T/ctor/ctor" -c "$APP $T/main-ran"
second=$(listed_pid "$T/out" ltapp)
if [ -z "$second" ] || [ "$second" = "$LPID" ]; then fail "two -c: the second command is not listed"; fi
[ ! -e "/proc/$second" ] || fail "two -c: the second command outlived dtrace"
LPROV=ltctor list_c '$target, two -c' -c "$T/ctor/ctor" -c "$APP $T/main-ran" -n 'ltctor$target:::'
expect_fail '$target of the first -c' 1 "^dtrace: failed to match ltapp[0-9]+::::" \
	-l -c "$T/ctor/ctor" -c "$APP $T/main-ran" -n 'ltapp$target:::'
# With -p.
start_prog "$APP"
list_c '$target -p' -p "$PID" -n 'ltapp$target:::request-done'
expect_eq "$LPID" "$PID" '-p: $target'
expect_eq "$(tail -n +2 "$T/out" | wc -l)" 1 '-p $target: lines'
kill "$PID"

# Refused descriptions, before any command starts.
rm -f "$T/started"
LT_CTOR_MARK="$T/started" expect_fail '$target without -c/-p' 2 \
	'^dtrace: invalid probe description "ltapp\$target:::": \$target is the process of -c or -p, and neither was given$' \
	-l -n 'ltapp$target:::'
LT_CTOR_MARK="$T/started" expect_fail 'an unknown macro' 2 \
	'^dtrace: invalid probe description "ltapp\$foo:::": undefined macro variable \$foo' \
	-l -c "$T/ctor/ctor" -n 'ltapp$foo:::'
[ ! -e "$T/started" ] || fail "a command was started for a refused description"

# Commands that cannot be run, or end before main.
expect_fail "no such command" 1 "^dtrace: failed to execute nosuch-usdtkit-cmd: No such file or directory$" \
	-l -c "nosuch-usdtkit-cmd arg"
printf 'not a program\n' >"$T/not-exec"
expect_fail "not executable" 1 "^dtrace: failed to execute $T/not-exec: Permission denied$" -l -c "$T/not-exec"
LT_CTOR_EXIT=1 expect_fail "exit in a constructor" 1 \
	"^dtrace: failed to control pid [0-9]+: process exited with status 7$" -l -c "$T/ctor/ctor"
LT_CTOR_SIGNAL=1 expect_fail "signal in a constructor" 1 \
	"^dtrace: failed to control pid [0-9]+: process died from signal 11$" -l -c "$T/ctor/ctor"
mkdir -p "$T/nolib"
cp "$APP" "$T/nolib/app"
expect_fail "missing library" 1 "^dtrace: failed to control pid [0-9]+: process exited with status 127$" \
	-l -c "$T/nolib/app"
# A program that ends at once reaches main first: listed, exit 0.
LPROV=ltctor list_c "true" -c "$T/ctor/ctor" -c true
expect_fail "-c ''" 2 "^dtrace: error: -c needs a command$" -l -c ''
expect_fail "-c ' '" 2 "^dtrace: error: -c needs a command$" -l -c ' '
expect_fail "-c without -l" 2 "only used with -l" -c "$APP"
expect_fail "-c with -h" 2 "cannot be used with -h" -l -h -c "$APP"

# dtrace killed while the command sleeps in its constructor: the command dies too.
LT_CTOR_SLEEP=30 "$DTRACE" -l -c "$T/ctor/ctor $T/main-ran" >/dev/null 2>&1 &
dt=$!
at_exit "kill -9 $dt 2>/dev/null"
child=""
for i in $(seq 100); do
	child=$(pgrep -P "$dt" || true)
	[ -n "$child" ] && break
	sleep 0.05
done
[ -n "$child" ] || fail "dtrace -c started no command"
wait_until 10 "the command to exec $T/ctor/ctor" eval '[ "$(readlink "/proc/$child/exe")" = "$T/ctor/ctor" ]'
kill -9 "$dt"
wait "$dt" 2>/dev/null || true
for i in $(seq 100); do
	running "$child" || break
	sleep 0.05
done
running "$child" && fail "the command (pid $child) survived dtrace's death"
[ ! -e "$T/main-ran" ] || fail "the command ran main() after dtrace's death"
echo "PASS"
