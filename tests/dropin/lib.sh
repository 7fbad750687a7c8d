# Helpers for the drop-in suite. Source after tests/lib/common.sh.
# Each test copies a project tree from tests/dropin/<name>/ to $T/<compiler>
# and builds it the way the project it imitates builds (make, a configure
# script, a shell script), with this build's dtrace and <sys/sdt.h>.
. "$USDTKIT_SRCDIR/tests/install/lib.sh"
need_bpftrace
command -v gdb >/dev/null || fail "gdb is not installed (scripts/deps.sh installs it)"
command -v make >/dev/null || fail "make is not installed (scripts/deps.sh installs it)"
# The imitated build systems split CFLAGS and DTRACE at blanks, as the real
# ones do: a checkout whose path has a space reaches them through links
# whose paths have none.
mkdir -p "$T/tree"
ln -s "$USDTKIT_SRCDIR/include" "$T/tree/include"
ln -s "$DTRACE" "$T/tree/dtrace"
DTRACE="$T/tree/dtrace"
SDT_CFLAGS="-I$T/tree/include"
# Programs built with -G objects run here without a helper daemon.
export USDTKIT_HELPER_SOCKET="$T/no-daemon.sock"

copy_project() { # name compiler -> cd into the copy
	rm -rf "$T/$2"
	cp -r "$USDTKIT_SRCDIR/tests/dropin/$1" "$T/$2"
	cd "$T/$2"
}

# provider:name pairs gdb lists for a file, sorted, one per line.
gdb_probes() { # file
	gdb -nx -batch -ex 'info probes' "$1" 2>/dev/null |
		awk '$1 == "stap" { print $2 ":" $3 }' | sort -u
}

# bpftrace -c on a program; fails with its output when bpftrace fails.
bt_run() { # outfile 'command' script
	bpftrace -c "$2" -e "$3" >"$1" 2>&1 || { cat "$1" >&2; fail "bpftrace -c '$2'"; }
}
