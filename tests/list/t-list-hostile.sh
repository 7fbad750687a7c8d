#!/bin/bash
# dtrace -l on files with malformed debug information: the probes are still
# all listed and dtrace exits 0. Debian 12's libdwarf aborts (double free)
# on a .debug_rnglists unit whose length runs past the section; dtrace reads
# DWARF in a child process, so it then names functions from the symbol
# table and says so. Then bounded random mutations of every .debug_*
# section: never a crash, every probe listed, every function name printable
# (escaped as \xNN where the file has other bytes).
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/list/lib.sh"

build_app "$T/app" gcc -O2 -g
BASE="$T/app/app"

# The allowed "name function" pairs, from the intact file.
note_sites "$BASE" | while read -r p n pc; do
	echo "${n//__/-} $(nm_function "$BASE" "$pc")"
	frames=$(addr2line -f -i -e "$BASE" "$pc" | awk 'NR % 2 == 1')
	[ "$(echo "$frames" | wc -l)" -gt 1 ] && echo "${n//__/-} $(echo "$frames" | head -n 1)"
done | sort -u >"$T/allowed"
note_sites "$BASE" | awk '$1 == "ltapp" { gsub("__", "-", $2); print $2 }' | sort -u >"$T/names"
grep -q inlined_helper "$T/allowed" || fail "the reference has no inlined site"

# mutate SEED OUT: a copy of the program with .debug_* bytes changed
# (SEED "rnglists": the unit length of .debug_rnglists made huge).
mutate() {
	python3 - "$BASE" "$2" "$1" <<'EOF'
import os, random, subprocess, sys
src, out, seed = sys.argv[1:4]
data = bytearray(open(src, "rb").read())
secs = []
for line in subprocess.run(["readelf", "-SW", src], capture_output=True, text=True).stdout.splitlines():
    if "] .debug_" in line:
        f = line.split("]", 1)[1].split()
        secs.append((f[0], int(f[3], 16), int(f[4], 16)))
if seed == "rnglists":
    off = [o for n, o, s in secs if n == ".debug_rnglists"]
    if not off:
        sys.exit("no .debug_rnglists")
    data[off[0] + 3] = 0x40
else:
    rnd = random.Random(int(seed))
    name, off, size = rnd.choice(secs)
    for _ in range(rnd.choice([1, 2, 4, 16, 64])):
        data[off + rnd.randrange(size)] = rnd.randrange(256)
open(out, "wb").write(data)
os.chmod(out, 0o755)
EOF
}

# check LABEL [strict]: the listing of $PID against the intact file's
# reference: every probe listed; functions printable ASCII (a mutated
# .debug_str makes names of anything, which must not reach the terminal
# raw), and with "strict" one that nm or addr2line names.
check() {
	local rc=0
	"$DTRACE" -l -p "$PID" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "$1: dtrace -l -p exited $rc"; }
	grep -qiE 'double free|abort|core dumped' "$T/err" && { cat "$T/err" >&2; fail "$1: a crash showed"; }
	awk -v p="ltapp$PID" '$2 == p { print $NF }' "$T/out" | sort -u | diff -u "$T/names" - >&2 ||
		fail "$1: not every probe listed"
	awk -v p="ltapp$PID" '$2 == p { print $NF, $(NF - 1) }' "$T/out" | sort -u >"$T/pairs"
	LC_ALL=C grep -vE '^[!-~]+ [!-~]+$' "$T/pairs" >"$T/bad" || true
	[ -s "$T/bad" ] && { cat -v "$T/bad" >&2; fail "$1: a function name is not printable ASCII"; }
	if [ "${2:-}" = strict ]; then
		comm -23 "$T/pairs" "$T/allowed" >"$T/bad"
		[ -s "$T/bad" ] && { cat "$T/bad" >&2; fail "$1: functions no reference tool names"; }
	fi
	return 0
}

mutate rnglists "$T/app/app-rng"
start_prog "$T/app/app-rng"
check "corrupt .debug_rnglists" strict
expect_grep "app-rng: functions named from the symbol table only" "$T/err" \
	"the DWARF failure is reported, naming the file"
kill "$PID"

for seed in $(seq 1 40); do
	mutate "$seed" "$T/app/app-m"
	start_prog "$T/app/app-m"
	check "mutation $seed"
	kill "$PID"
	wait "$PID" 2>/dev/null || true
done
echo "PASS"
