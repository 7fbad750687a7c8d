#!/bin/sh
# The real-world suite (tests/realworld/README.md): builds real projects from
# Debian's source packages twice, with SystemTap's dtrace and <sys/sdt.h>
# (systemtap-sdt-dev) and with usdtkit's, compares the two builds (build
# result, warnings from the headers, probe sites per provider, values traced
# by bpftrace, dtrace -l -p, -h and -G times) and prints one table for all,
# then "N passed, N failed".
#
#   sh scripts/realworld.sh [PROJECT...]    default: every project
#   sh scripts/realworld.sh --check [PROJECT...]
#       each project only as far as its first real step: the private source
#       lists updated and the source package found (the fresh-machine check
#       runs it: tests/fresh/in-chroot.sh)
#
# PROJECT is a test under tests/realworld/ (t-PROJECT.sh): memcached,
# glib2.0, postgresql-15, php8.2, libvirt, python3.11, ruby3.1, erlang.
# Everything it fetches and builds stays under $BUILDDIR/realworld (default
# build/realworld); the table is also written to
# $BUILDDIR/realworld/results.md. Needs root (apt-get, bpftrace) and
# Debian's package archive. memcached also runs in `meson test` (suite
# realworld); the others only here.
set -eu
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
	exec sudo -E sh "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh scripts/deps.sh
builddir=${BUILDDIR:-build}
[ -f "$builddir/build.ninja" ] || meson setup "$builddir" >/dev/null
ninja -C "$builddir" >/dev/null || { ninja -C "$builddir"; exit 1; }
bdir=$(cd "$builddir" && pwd)
rw=$bdir/realworld
mkdir -p "$rw/results"

if [ "${1:-}" = --check ]; then
	export RW_CHECK=1
	shift
fi
projects=${*:-$(ls tests/realworld/t-*.sh | sed 's|.*/t-||; s|\.sh$||' | sort)}
passed=0
failed=0
for p in $projects; do
	[ -f "tests/realworld/t-$p.sh" ] || { echo "realworld: no project '$p' (tests/realworld/t-$p.sh)" >&2; exit 2; }
	echo "realworld: $p ..." >&2
	rm -f "$rw/results/$p.tsv"
	start=$(date +%s)
	if USDTKIT_SRCDIR=$top USDTKIT_BUILDDIR=$bdir DTRACE=$bdir/dtrace/dtrace \
		bash "tests/realworld/t-$p.sh" >"$rw/results/$p.log" 2>&1; then
		passed=$((passed + 1))
		echo "realworld: $p passed ($(($(date +%s) - start)) s)" >&2
	else
		failed=$((failed + 1))
		echo "realworld: $p FAILED ($(($(date +%s) - start)) s); its log: $rw/results/$p.log" >&2
		grep '^FAIL' "$rw/results/$p.log" >&2 || tail -20 "$rw/results/$p.log" >&2
	fi
done

if [ "${RW_CHECK:-}" = 1 ]; then
	echo "realworld: check: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
fi

# One table: each project's rows, SystemTap's column beside usdtkit's.
{
	echo "| project | | SystemTap | usdtkit |"
	echo "|---|---|---|---|"
	for p in $projects; do
		[ -f "$rw/results/$p.tsv" ] || { echo "| $p | (no results) | | |"; continue; }
		ver=$(sed -n 's/.*Debian source [^ ]* \([^ ,]*\),.*/\1/p' "$rw/results/$p.log" | head -1)
		tail -n +2 "$rw/results/$p.tsv" | awk -F '\t' -v p="$p $ver" \
			'{ printf "| %s | %s | %s | %s |\n", NR == 1 ? p : "", $1, $2, $3 }'
	done
} >"$rw/results.md"
cat "$rw/results.md"
echo "realworld: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
