#!/bin/bash
# Runs inside the fresh Debian 12 chroot that scripts/fresh-check.sh makes:
# in a clone at `/tmp/usdt kit` (under /tmp, with a space), as root, with /proc, /dev and the host's /sys.
# The README's two commands, in order, as a new user runs them:
#
#   1. `sh scripts/demo.sh`: installs what is missing (scripts/deps.sh, the
#      only thing that installs anything), builds build/, and runs the C
#      example under the helper daemon, perf and bpftrace. It must exit 0;
#   2. `sh scripts/test.sh`, which must end with "N passed, 0 failed" and
#      exit 0. Restricted, for CI's time: USDTKIT_RUNS=plain, and the suites
#      fresh (itself: a chroot in the chroot), packaging (chroots and package
#      builds of its own) and realworld (whole projects' builds) left out.
#      The plain run is every test of this tree on this machine, the kernel's
#      tracing included: what a fresh machine can break (a package deps.sh
#      forgets, a path under /tmp, a tool's version) shows there. The
#      sanitizer and fuzz runs are the same tests on other builds of the same
#      sources, run by CI on the host; their compilers and runtimes are
#      proven here by the plain run's tests that build with clang
#      -fsanitize=address,undefined, memory and thread (drti/t-drti-sanitized,
#      the checkers suite) and by the fuzz suite's parser target, built
#      (clang -fsanitize=fuzzer,address,undefined) and run for 1 s below.
#
# Cost, measured on the 2-core CI machine (the numbers are in
# tests/README.md, "The fresh-machine check"): the full scripts/test.sh here
# would add the sanitizer run and the fuzz run to the plain one, about as
# long again as CI's own run of them, which would double CI's time; the
# plain run alone keeps the check at a fraction of it. USDTKIT_FRESH_RUNS
# and USDTKIT_FRESH_SKIP_SUITES change the restriction (e.g. "plain san
# fuzz" and "fresh" for the whole thing by hand).
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

# USDTKIT_FRESH_RUNS and USDTKIT_FRESH_SKIP_SUITES of fresh-check.sh's caller.
while IFS='=' read -r k v; do
	case $k in USDTKIT_FRESH_RUNS | USDTKIT_FRESH_SKIP_SUITES) export "$k=$v" ;; esac
done </tmp/usdtkit-fresh.env 2>/dev/null || true
runs=${USDTKIT_FRESH_RUNS:-plain}
skip=${USDTKIT_FRESH_SKIP_SUITES-fresh packaging realworld}
echo "fresh: USDTKIT_RUNS='$runs' USDTKIT_SKIP_SUITES='$skip' sh scripts/test.sh"
rc=0
USDTKIT_RUNS=$runs USDTKIT_SKIP_SUITES=$skip sh scripts/test.sh >test.log 2>&1 || rc=$?
took "sh scripts/test.sh"
grep -E '^(skipped|failed|not passed|FAIL)' test.log | head -40 || true
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' test.log | tail -1)
echo "fresh: scripts/test.sh: ${summary:-no summary line} (exit $rc)"
if [ "$rc" -ne 0 ] || [ -z "$summary" ] || ! echo "$summary" | grep -q ' 0 failed'; then
	grep -E -B2 -A30 '^[0-9]+/[0-9]+ .*(FAIL|TIMEOUT)' test.log | head -150 >&2 || tail -60 test.log >&2
	echo "fresh: FAIL: scripts/test.sh did not end with 0 failed" >&2
	rc=1
fi

bash tests/fuzz/run-parser.sh 1 || { echo "fresh: FAIL: fuzz-parser (1 s)" >&2; rc=1; }
took "fuzz-parser, built and run for 1 s"
exit $rc
