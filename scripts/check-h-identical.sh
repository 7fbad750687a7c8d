#!/bin/sh
# check-h-identical.sh OLD_DTRACE NEW_DTRACE [DIR...]: runs both commands'
# `dtrace -h -s FILE -o OUT` on every .d file under DIRs (default: tests/ and
# examples/ of this checkout) and compares, file by file, the exit status,
# stderr (the output path normalised) and the header, byte for byte. For a
# change to the front end or the emitter that must not change behaviour (a
# refactoring): build the old tree in a second worktree, then
#   scripts/check-h-identical.sh ../old/build/dtrace/dtrace build/dtrace/dtrace
# Prints how many files were compared and every difference; exits 1 on any.
set -eu
[ $# -ge 2 ] || { echo "usage: check-h-identical.sh OLD_DTRACE NEW_DTRACE [DIR...]" >&2; exit 2; }
old=$1 new=$2
shift 2
for d in "$old" "$new"; do
	[ -x "$d" ] || { echo "check-h-identical: $d is not an executable" >&2; exit 2; }
done
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$top/tests" "$top/examples"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/usdtkit-hcmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/old" "$tmp/new"
find "$@" -name '*.d' -type f | LC_ALL=C sort >"$tmp/files"
n=0 bad=0
while IFS= read -r f; do
	for side in old new; do
		if [ $side = old ]; then cmd=$old; else cmd=$new; fi
		rm -f "$tmp/$side/probes.h"
		rc=0
		"$cmd" -h -s "$f" -o "$tmp/$side/probes.h" </dev/null >"$tmp/$side/stdout" \
			2>"$tmp/$side/stderr.raw" || rc=$?
		echo "$rc" >"$tmp/$side/rc"
		sed "s|$tmp/$side/|OUT/|g" "$tmp/$side/stderr.raw" >"$tmp/$side/stderr"
		[ -f "$tmp/$side/probes.h" ] || echo "(no output file)" >"$tmp/$side/probes.h"
	done
	n=$((n + 1))
	for part in rc stdout stderr probes.h; do
		if ! cmp -s "$tmp/old/$part" "$tmp/new/$part"; then
			bad=$((bad + 1))
			echo "DIFFERENT ($part): $f"
			diff -u "$tmp/old/$part" "$tmp/new/$part" | head -20 || true
			break
		fi
	done
done <"$tmp/files"
echo "compared $n .d files: $((n - bad)) identical, $bad different"
[ "$bad" -eq 0 ] && [ "$n" -gt 0 ]
