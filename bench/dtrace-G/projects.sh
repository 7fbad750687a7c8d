#!/bin/bash
# `dtrace -G` as four real projects run it, usdtkit's against SystemTap's
# /usr/bin/dtrace, side by side (issue 34: never slower, small projects
# included). Each project's -G step is reproduced by its shape: how many
# probes its provider declares and of which argument types, how many
# objects with probe sites -G is given, the CC and CFLAGS it runs under
# (Debian's dpkg-buildflags, which its package build exports), and how many
# -G runs one build makes:
#   php        11 probes, 6 objects, twice (PIC and non-PIC objects)
#   libvirt    3 providers (41, 9, 8 probes), no objects, one run each
#   cpython    13 probes, 3 objects
#   postgresql 67 probes, 733 objects, -C
# The provider files are written here from those shapes, not copied from
# the projects (tests/realworld builds the projects themselves).
#
#   bench/dtrace-G/projects.sh [BUILDDIR] [RUNS]   (default: build, 15)
#
# For each project: callgrind's instruction count of one whole -G step,
# every child process included (cc, cc1, as; SystemTap's python), which a
# loaded machine does not change; then wall-clock best and median of RUNS,
# the two tools alternating so that load hits both alike.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-build}
runs=${2:-15}
ours=${USDTKIT_DTRACE:-$top/$builddir/dtrace/dtrace} # (another build's, to compare versions)
stap=/usr/bin/dtrace
[ -x "$ours" ] || { echo "build usdtkit first: $ours missing" >&2; exit 1; }
[ -x "$stap" ] || { echo "SystemTap's dtrace is not installed (systemtap-sdt-dev)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

w=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-bench-Gp.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"
export CC=gcc
debian_cflags="-g -O2 -ffile-prefix-map=$w=. -fstack-protector-strong -Wformat -Werror=format-security"

# provider NAME NPROBES: a provider of NPROBES probes, 0 to 5 arguments of
# the types these projects declare, and a source firing every probe.
provider() {
	python3 - "$1" "$2" <<'PY'
import sys
name, n = sys.argv[1], int(sys.argv[2])
types = ["char *", "int", "const char *", "unsigned long long", "void *", "long"]
vals = ["s", "i", "s", "u", "v", "l"]
with open(name + ".d", "w") as f:
    f.write("provider %s {\n" % name)
    for i in range(n):
        k = i % 6
        f.write("\tprobe p%d__%s(%s);\n" % (i, "entry" if i % 2 else "return",
                                          ", ".join(types[(i + j) % 6] for j in range(k))))
    f.write("};\n")
with open(name + "-sites.c", "w") as f:
    f.write('#include "%s.h"\n' % name)
    f.write("void %s_fire(char *s, int i, unsigned long long u, void *v, long l);\n" % name)
    f.write("void %s_fire(char *s, int i, unsigned long long u, void *v, long l)\n{\n" % name)
    for i in range(n):
        k = i % 6
        macro = "%s_P%d_%s" % (name.upper(), i, "ENTRY" if i % 2 else "RETURN")
        f.write("\tif (%s_ENABLED())\n\t\t%s(%s);\n" % (macro, macro,
                ", ".join(vals[(i + j) % 6] for j in range(k))))
    f.write("}\n")
PY
	"$ours" -h -s "$1.d" -o "$1.h"
}

# objects NAME COUNT [CFLAGS...]: COUNT objects with NAME's sites (copies
# of one: -G reads each, SystemTap's ignores them).
objects() {
	local name=$1 n=$2 i
	shift 2
	"$CC" "$@" -I"$top/include" -I. -c "$name-sites.c" -o "$name-0.o"
	for ((i = 1; i < n; i++)); do cp "$name-0.o" "$name-$i.o"; done
}
objlist() { local i; for ((i = 0; i < $2; i++)); do printf '%s ' "$1-$i.o"; done; }

# The -G steps of one build, as one shell line per tool (TOOL is replaced).
provider php 11
objects php 6 $debian_cflags -fPIC
php_step="TOOL -G -s php.d -o php-pic.o $(objlist php 6) && TOOL -G -s php.d -o php.o $(objlist php 6)"
provider libvirt 41
provider libvirt_qemu 8
provider libvirt_daemon 9
libvirt_step="TOOL -G -s libvirt.d -o libvirt.o && TOOL -G -s libvirt_qemu.d -o libvirt_qemu.o && TOOL -G -s libvirt_daemon.d -o libvirt_daemon.o"
provider cpython 13
objects cpython 3 $debian_cflags -fPIC
cpython_step="TOOL -G -s cpython.d -o cpython.o $(objlist cpython 3)"
provider postgresql 67
objects postgresql 733 $debian_cflags
postgresql_step="TOOL -C -G -s postgresql.d -o postgresql.o $(objlist postgresql 733)"

step() { # PROJECT TOOL
	local v="${1}_step"
	CFLAGS="$debian_cflags" sh -c "${!v//TOOL/$2}" >/dev/null 2>&1 || {
		echo "$1: the -G step failed with $2" >&2
		exit 1
	}
}

instructions() { # PROJECT TOOL
	rm -f cg.*
	CFLAGS="$debian_cflags" valgrind --tool=callgrind --trace-children=yes \
		--callgrind-out-file="$w/cg.%p" sh -c "${2}" >/dev/null 2>&1
	cat cg.* | awk '/^totals:/ { n += $2 } END { printf "%.1f", n / 1e6 }'
	rm -f cg.*
}

ms() { # PROJECT TOOL: wall ms of one step
	local s e
	s=$(date +%s%N)
	step "$1" "$2"
	e=$(date +%s%N)
	echo $(((e - s) / 1000))
}

stats() { # microseconds...: best and median in ms
	printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END {
		printf "%.1f\t%.1f", a[1] / 1000, (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000 }'
}

printf 'project\tG runs\tM instr ours\tM instr SystemTap\tours/SystemTap\tbest ms ours\tmedian ms ours\tbest ms SystemTap\tmedian ms SystemTap\n'
for p in php libvirt cpython postgresql; do
	v="${p}_step"
	step $p "$ours"
	step $p "$stap"
	io=$(instructions $p "${!v//TOOL/$ours}")
	is=$(instructions $p "${!v//TOOL/$stap}")
	to=() ts=()
	for ((r = 0; r < runs; r++)); do
		to+=("$(ms $p "$ours")")
		ts+=("$(ms $p "$stap")")
	done
	nG=$(grep -o -- '-G' <<<"${!v}" | wc -l)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $p "$nG" "$io" "$is" \
		"$(awk -v a="$io" -v b="$is" 'BEGIN { printf "%.2f", a / b }')" \
		"$(stats "${to[@]}")" "$(stats "${ts[@]}")"
done
echo "(CC=$CC, CFLAGS=$debian_cflags; $runs runs each, alternating; load: $(cut -d' ' -f1-3 /proc/loadavg))"
