#!/bin/bash
# Against SystemTap's own dtrace (/usr/bin/dtrace), the reference peer: for
# every probe both tools emit from the same .d, a program calling the same
# macros yields the same note provider and probe names and references the
# same semaphore symbols. (SystemTap's tool silently drops some probes it
# cannot parse; those are listed, and every probe must be ours.)
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
. "$USDTKIT_SRCDIR/tests/header/lib.sh"
[ -x /usr/bin/dtrace ] || fail "SystemTap's dtrace is missing (systemtap-sdt-dev; scripts/deps.sh installs it)"
cd "$T"

notes_of() { # object: "provider name" lines, sorted
	readelf -n "$1" | awk '/Provider:/ { p = $2 } /Name:/ { print p, $2 }' | sort
}
semaphores_of() { # object: referenced semaphore symbols, sorted
	nm -u "$1" | awk '/_semaphore$/ { print $2 }' | sort
}

compared=0
for d in "$PROVIDERS"/*.d; do
	name=$(basename "$d" .d)
	"$DTRACE" -h -s "$d" -o ours.h || fail "$name: dtrace -h failed"
	/usr/bin/dtrace -h -s "$d" -o stap.h >/dev/null 2>&1 || true
	# The macros SystemTap defined (it has two #define lines per _ENABLED()).
	grep -oE '^#define [A-Za-z0-9_]+_ENABLED\(\)' stap.h | sed 's/^#define //; s/_ENABLED()$//' |
		sort -u >stap-macros
	[ -s stap-macros ] || { echo "$name: SystemTap's tool emitted no probe"; continue; }
	# A call of each macro SystemTap defined with the arity we define, 0 for
	# every argument. (SystemTap takes `probe p(void)` for one argument.)
	arity() {
		local p
		p=$(params "$1" "$2")
		if [ -z "$p" ]; then echo 0; else echo $(($(echo "$p" | tr -cd , | wc -c) + 1)); fi
	}
	params() { grep -E "^#define $1\(" "$2" | head -1 | sed -E 's/^[^(]*\(([^)]*)\).*/\1/'; }
	{
		echo '#include HDR'
		echo 'void f(void);'
		echo 'void f(void) {'
		while read -r m; do
			ours=$(params "$m" ours.h)
			[ -n "$(grep -E "^#define $m\(" ours.h)" ] || fail "$name: SystemTap defines $m, we do not"
			if [ "$(arity "$m" stap.h)" != "$(arity "$m" ours.h)" ]; then
				echo "$name: SystemTap's $m has other parameters: ($(params "$m" stap.h))" >&2
				continue
			fi
			echo "	$m($(echo "$ours" | sed -E 's/arg[0-9]+/0/g'));"
		done <stap-macros
		echo '}'
	} >calls.c
	gcc -O2 -I"$SDT_INC" -DHDR='"ours.h"' -c calls.c -o ours.o || fail "$name: our header"
	gcc -O2 -DHDR='"stap.h"' -c calls.c -o stap.o || fail "$name: SystemTap's header"
	notes_of ours.o >ours.notes
	notes_of stap.o >stap.notes
	[ -s stap.notes ] || fail "$name: no notes read from SystemTap's object"
	diff stap.notes ours.notes || fail "$name: note provider/probe names differ from SystemTap's"
	semaphores_of ours.o >ours.sems
	semaphores_of stap.o >stap.sems
	diff stap.sems ours.sems || fail "$name: semaphore symbols differ from SystemTap's"
	all=$(hdrtest expect "$d" | wc -l)
	echo "$name: $(wc -l <stap.notes) of $all probes compared"
	compared=$((compared + $(wc -l <stap.notes)))
done
[ "$compared" -ge 20 ] || fail "only $compared probes could be compared"
echo "$compared probes: same notes and semaphores as SystemTap's dtrace"
