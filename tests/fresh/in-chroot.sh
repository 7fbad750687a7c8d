#!/bin/bash
# Runs inside the fresh Debian 12 chroot that scripts/fresh-check.sh makes:
# in a clone at `/tmp/usdt kit` (under /tmp, with a space), as root, with /proc, /dev and the host's /sys.
# The README's two commands, in order, as a new user runs them:
#
#   1. `sh scripts/demo.sh`: installs what is missing (scripts/deps.sh, the
#      only thing that installs anything), builds build/, and runs the C
#      example under the helper daemon, perf and bpftrace. It must exit 0;
#   2. `sh scripts/test.sh`, the README's test command as it stands (the
#      quick run: every suite but the heavy parts, which are each a flag of
#      their own), which must end with "N passed, 0 failed" and exit 0;
#   3. every other documented test command as far as its first real step:
#      `sh scripts/arm64-test.sh --check` (the emulated machine's tools,
#      binfmt_misc and packages: a fresh machine once lacked arch-test) and
#      `sh scripts/realworld.sh --check` (the Debian source packages found);
#      the fuzz suite's parser target built and run for 1 s. The heavy
#      parts themselves run on the host (scripts/test.sh --ci).
#
# USDTKIT_FRESH_ARGS (fresh-check.sh's caller): arguments for test.sh here,
# e.g. "--plain --san --fuzz" for more than the README's command by hand.
set -eu
cd "$(dirname "$0")/../.."
t0=$(date +%s)
took() { echo "fresh: $1 took $(($(date +%s) - t0)) s"; t0=$(date +%s); }

echo "fresh: sh scripts/demo.sh"
# debconf's note, once per package, that apt-utils (not needed) is missing.
if ! sh scripts/demo.sh >demo.log 2> >(grep -v '^debconf: delaying package configuration' >&2); then
	tail -60 demo.log >&2
	echo "fresh: FAIL: sh scripts/demo.sh failed (above)" >&2
	exit 1
fi
tail -5 demo.log
took "sh scripts/demo.sh (deps.sh, the build, the demo)"

# USDTKIT_FRESH_ARGS of fresh-check.sh's caller.
while IFS='=' read -r k v; do
	case $k in USDTKIT_FRESH_ARGS) export "$k=$v" ;; esac
done </tmp/usdtkit-fresh.env 2>/dev/null || true
args=${USDTKIT_FRESH_ARGS:-}
echo "fresh: sh scripts/test.sh $args"
rc=0
# shellcheck disable=SC2086
sh scripts/test.sh $args >test.log 2>&1 || rc=$?
took "sh scripts/test.sh"
grep -E '^(skipped|failed|not passed|FAIL)' test.log | head -40 || true
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' test.log | tail -1)
echo "fresh: scripts/test.sh: ${summary:-no summary line} (exit $rc)"
if [ "$rc" -ne 0 ] || [ -z "$summary" ] || ! echo "$summary" | grep -q ' 0 failed'; then
	grep -E -B2 -A30 '^[0-9]+/[0-9]+ .*(FAIL|TIMEOUT)' test.log | head -150 >&2 || tail -60 test.log >&2
	echo "fresh: FAIL: scripts/test.sh did not end with 0 failed" >&2
	rc=1
fi
# A test that skips here skips on every fresh machine: what it needs is
# missing from deps.sh (git, once, for the style check).
if [ -n "$summary" ] && ! echo "$summary" | grep -q ' 0 skipped'; then
	echo "fresh: FAIL: tests skipped on a fresh machine (above): deps.sh misses what they need" >&2
	rc=1
fi

for cmd in "scripts/arm64-test.sh --check" "scripts/realworld.sh --check"; do
	echo "fresh: sh $cmd"
	# shellcheck disable=SC2086
	if ! sh $cmd >check.log 2>&1; then
		tail -30 check.log >&2
		echo "fresh: FAIL: sh $cmd (its first step) failed" >&2
		rc=1
	fi
	tail -1 check.log
	took "sh $cmd"
done

bash tests/fuzz/run-parser.sh 1 || { echo "fresh: FAIL: fuzz-parser (1 s)" >&2; rc=1; }
took "fuzz-parser, built and run for 1 s"
exit $rc
