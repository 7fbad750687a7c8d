# shellcheck shell=bash
# What loopcost.sh and loadtest.sh share (sourced, not run): the build's
# tools checked, a private work directory removed at exit, the timing
# client and the probed libraries they load the daemon with.
#   bh_setup NAME BUILDDIR TOOL...  sets top, builddir (absolute), helperd
#                                   (HELPERD= or the build's), w (the work
#                                   directory), sock; exports the socket;
#                                   checks the tools (relative to builddir),
#                                   root and tracefs
#   bh_on_exit CMD                  CMD runs at exit, before w is removed
#   bh_loadclient                   builds $w/loadclient (loadclient.c)
#   bh_lib NAME PROVIDER NSITES [N ARGS]  $w/NAME.so: one function with
#                                   NSITES probes STAP_PROBE<N>(PROVIDER, pI ARGS)
#   bh_ctorbench DTRACE D_FILE PROVIDER OUT  OUT: drti's constructor timed
#                                   inside one process (ctorbench.c appended
#                                   to the provider source `dtrace -G -k`
#                                   generates from D_FILE); run.sh's too
# PROVIDER is prefixed with $P (unique per run) so that runs never share events.

bh_setup() {
	local name=$1 f
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	builddir=$2
	shift 2
	case $builddir in /*) ;; *) builddir="$top/$builddir" ;; esac
	helperd=${HELPERD:-$builddir/kernel-helper/helperd/usdtkit-helperd}
	for f in "$helperd" "$@"; do
		case $f in /*) ;; *) f="$builddir/$f" ;; esac
		[ -x "$f" ] || { echo "build usdtkit first: $f missing (ninja -C $builddir)" >&2; exit 1; }
	done
	[ "$(id -u)" = 0 ] || { echo "needs root (a daemon writing tracefs)" >&2; exit 1; }
	[ -w /sys/kernel/tracing/uprobe_events ] || { echo "needs tracefs at /sys/kernel/tracing" >&2; exit 1; }
	w=$(mktemp -d "/tmp/usdtkit-$name.XXXXXX")
	chmod 711 "$w"
	bh_exit_cmds=""
	trap bh_cleanup EXIT
	P="${name:0:2}$$"
	sock="$w/helper.sock"
	export USDTKIT_HELPER_SOCKET="$sock"
}

bh_on_exit() {
	bh_exit_cmds="$bh_exit_cmds$1;"
}

bh_cleanup() {
	eval "$bh_exit_cmds"
	rm -rf "$w"
}

bh_loadclient() {
	gcc -O2 -I"$top/core" -I"$top/tests/lib" "$top/bench/helper/loadclient.c" -o "$w/loadclient" -ldl
}

bh_lib() {
	local i
	{
		echo '#include <sys/sdt.h>'
		echo 'void lib_call(int x);'
		echo 'void lib_call(int x) {'
		echo '	if (x != 42) return;'
		for i in $(seq 0 $(($3 - 1))); do echo "	STAP_PROBE${4:-}(${P}$2, p$i${5:-});"; done
		echo '}'
	} >"$w/$1.c"
	gcc -O0 -fPIC -shared -I"$top/include" "$w/$1.c" -o "$w/$1.so"
}

bh_ctorbench() {
	local dtrace=$1 d=$2 prov=$3 out=$4 src kept
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	kept=$("$dtrace" -G -k -s "$d" -o "$out.kept.o" 2>&1 |
		sed -n 's/.*kept the provider object.s source in //p')
	[ -f "$kept" ] || { echo "dtrace -G -k kept no source" >&2; return 1; }
	cat "$kept" "$src/bench/helper/ctorbench.c" >"$out.c"
	rm -rf "$(dirname "$kept")" "$out.kept.o"
	gcc -O2 -I"$src/include" -DCTORBENCH_PROVIDER="$prov" "$out.c" -o "$out"
}
