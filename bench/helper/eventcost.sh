#!/bin/sh
# The kernel's cost of creating and removing N uprobe events (eventcost.c),
# by N, shape and write mode: one line per write(), an open per line,
# lines packed 4 KiB or 64 KiB per write(). Root; about 15 minutes on a
# loaded 2-core machine (the 20,000 rows are most of it).
#
#   bench/helper/eventcost.sh [N...]      default 100 1000 3000 10000 20000
set -eu
[ "$(id -u)" -eq 0 ] || { echo "eventcost.sh: needs root (tracefs)" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/eventcost" "$here/eventcost.c"
ns=${*:-100 1000 3000 10000 20000}
max=$(for n in $ns; do echo "$n"; done | sort -n | tail -1)
head -c $((max + 4096)) /dev/zero >"$work/target"
echo "N shape mode create_ms remove_ms"
for n in $ns; do
	for shape in events sites; do
		for mode in line batch4096 batch65536 open; do
			# an open per line: measured up to 3,000 (it only adds)
			[ "$n" -gt 3000 ] && [ "$mode" = open ] && continue
			"$work/eventcost" "$work/target" "$n" "$shape" "$mode"
		done
	done
done
