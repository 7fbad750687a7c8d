#!/bin/bash
# What the probes cost a program in bytes (README.md here): a 1,011-probe,
# 1,021-site provider shaped like Erlang/OTP's (gen.py) built with
# usdtkit's dtrace -h/-G and with SystemTap's (/usr/bin/dtrace, its
# <sys/sdt.h>), and the sections, notes and loaded segments compared.
#   bench/footprint/run.sh [BUILDDIR] [OTHER-USDTKIT-DTRACE...]
# An OTHER dtrace (an older build, say) gets a row of its own.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
b=$(cd "${1:-$top/build}" && pwd)
shift || true
ours="$b/dtrace/dtrace"
[ -x "$ours" ] || { echo "footprint: build $ours first" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 "$top/bench/footprint/gen.py" "$T"
cd "$T"
nprobes=$(grep -c '^	probe ' big.d)
nsites=$(grep -c 'BIG_' big.c)

sec() { # FILE SECTION -> size in bytes (0 when absent)
	local h
	h=$(readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\] *//' | awk -v s="$2" '$1 == s { print $5 }')
	echo $((16#${h:-0}))
}
loaded() { # FILE -> sum of PT_LOAD file sizes, and of the r-x one
	local t=0 x=0 sz fl
	while read -r sz fl; do
		t=$((t + sz))
		case $fl in *E*) x=$((x + sz)) ;; esac
	done < <(readelf -lW "$1" | awk '$1 == "LOAD" { print $5, $7 $8 }')
	echo "$t $x"
}
row() { # NAME DTRACE SDT-INCLUDE
	local name=$1 dt=$2 inc=$3 meta stap probes load
	mkdir -p "$name" && cd "$name"
	cp ../big.d ../big.c .
	"$dt" -h -s big.d -o big.h
	gcc -O2 -I"$inc" -I. -c big.c -o big.o
	"$dt" -G -s big.d -o big_provider.o big.o
	gcc -o big big.o big_provider.o
	meta=$(sec big .note.usdtkit)
	stap=$(sec big .note.stapsdt)
	probes=$(sec big .probes)
	read -r load x < <(loaded big)
	printf '| %-28s | %9d | %7.1f | %9d | %6.1f | %7d | %9d | %9d |\n' "$name" "$meta" \
		"$(echo "$meta / $nprobes" | bc -l)" "$stap" "$(echo "$stap / $nsites" | bc -l)" \
		"$probes" "$load" "$x"
	cd ..
}
echo "$nprobes probes, $nsites sites, gcc -O2, x86-64"
echo
echo '| dtrace                       | .note.usdtkit | /probe | .note.stapsdt | /site | .probes | PT_LOAD bytes | r-x bytes |'
echo '|------------------------------|----------:|--------:|----------:|-------:|--------:|----------:|----------:|'
row usdtkit "$ours" "$top/include"
i=0
for o in "$@"; do
	i=$((i + 1))
	row "other-$i" "$o" "$top/include"
done
[ -x /usr/bin/dtrace ] && row systemtap /usr/bin/dtrace /usr/include
