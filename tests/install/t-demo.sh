#!/bin/bash
# The README's first command, scripts/demo.sh, on this build: it must build
# and run the C example, list its probes with dtrace -l through the helper
# daemon, show perf firings with decoded arguments and bpftrace firings,
# and leave no event and no scratch directory behind.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
need_bpftrace
command -v perf >/dev/null || fail "perf is not installed (scripts/deps.sh installs it)"

export TMPDIR="$T"
rc=0
BUILDDIR="$USDTKIT_BUILDDIR" USDTKIT_DEMO_NO_BUILD=1 sh "$USDTKIT_SRCDIR/scripts/demo.sh" >"$T/demo.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/demo.out" >&2; fail "demo.sh exited $rc"; }
out="$T/demo.out"
# dtrace -l through the daemon: the three probes of quickstart.d, in main.
for n in request-start request-done request-summary; do
	expect_grep "^ +[0-9]+ +quickstart[0-9]+ +quickstart +main $n\$" "$out" "dtrace -l lists $n"
done
# The helper's events, typed from quickstart.d (string arguments fetched as strings).
expect_grep '^p:sdt_quickstart/request__start [^ ]+:0x[0-9a-f]+\(0x[0-9a-f]+\) id=[^ ]+:s32 path=\+0\([^ ]+\):ustring$' \
	"$out" "the request__start event"
# perf: decoded firings; each checked against quickstart.c: request N has
# path paths[N % 3] + "?id=N" and status 404 when N % 4 == 0, else 200.
paths=(/index.html /api/users /static/app.js)
grep -E 'sdt_quickstart:request__(start|done|summary):' "$out" >"$T/perf" ||
	{ cat "$out" >&2; fail "no perf firings in the demo's output"; }
nstart=0 ndone=0
while read -r line; do
	if [[ $line =~ request__start:\ \([0-9a-f]+\)\ id=([0-9]+)\ path=\"(.*)\"$ ]]; then
		id=${BASH_REMATCH[1]}
		expect_eq "${BASH_REMATCH[2]}" "${paths[id % 3]}?id=$id" "perf: path of request $id"
		nstart=$((nstart + 1))
	elif [[ $line =~ request__done:\ \([0-9a-f]+\)\ id=([0-9]+)\ status=([0-9]+)\ latency_us=([0-9]+)$ ]]; then
		id=${BASH_REMATCH[1]}
		expect_eq "${BASH_REMATCH[2]}" "$([ $((id % 4)) -eq 0 ] && echo 404 || echo 200)" \
			"perf: status of request $id"
		[ "${BASH_REMATCH[3]}" -ge 250000 ] || fail "perf: request $id took less than its 250 ms pause"
		ndone=$((ndone + 1))
	elif [[ $line =~ request__summary:\ \([0-9a-f]+\)\ text=\"request\ ([0-9]+)\ (.*)\"$ ]]; then
		id=${BASH_REMATCH[1]}
		expect_eq "${BASH_REMATCH[2]}" \
			"${paths[id % 3]}?id=$id -> $([ $((id % 4)) -eq 0 ] && echo 404 || echo 200)" \
			"perf: summary of request $id"
	else
		fail "perf: undecoded line: $line"
	fi
done <"$T/perf"
[ $nstart -ge 2 ] && [ $ndone -ge 2 ] || { cat "$T/perf" >&2; fail "perf: too few firings in 1 s"; }
expect_grep '^request 2 start  /static/app.js\?id=2$' "$out" "bpftrace: request 2 start"
expect_grep '^summary: request 4 /api/users\?id=4 -> 404$' "$out" "bpftrace: summary 4"
expect_grep '^D: request 3 /index.html\?id=3$' "$out" "dtrace -n: request 3"
expect_grep '^ +404 +1$' "$out" "dtrace -n: the exit dump's 404"
expect_grep '^sdt_quickstart events left for this program: 0$' "$out" "the daemon removed its events"
# Nothing left: no scratch directory, no event naming one.
[ -z "$(ls -d "$T"/usdtkit-demo.* 2>/dev/null)" ] || fail "demo.sh left its scratch directory"
# The events name the program by the path the demo printed (an alias of the
# daemon's under /run/usdtkit/files when the program sits under /tmp, not its
# own path: kernel-helper/README.md, "What uprobe_events shows").
evpath=$(sed -nE 's|^p:sdt_quickstart/request__start ([^ ]+):0x.*|\1|p' "$out" | head -1)
[ -n "$evpath" ] || fail "no event path in the demo's output"
expect_no_grep " $evpath:" "$TRACEFS/uprobe_events" "an event of the demo ($evpath) left in tracefs"
echo "demo.sh: built, registered, listed, traced in perf and bpftrace, cleaned up"
