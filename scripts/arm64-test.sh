#!/bin/sh
# Runs usdtkit's kernel suites on an emulated arm64 Debian 12 machine
# (scripts/arm64-vm.sh) and ends with the line CI reads: "N passed, N
# failed, N skipped" (scripts/summary.py), the tests named arm64/SUITE/TEST.
#
# Theory: the guest builds the checkout natively (its own gcc, meson and
# ninja, on its own disk: the checkout is shared read-only over 9p) and runs
# the chosen meson tests there, on an arm64 kernel, with the arm64 builds of
# bpftrace, gdb, perf and valgrind. Nothing is cross-built: every program a
# test compiles is compiled by the guest's gcc or clang, so the operands in
# the notes are the ones arm64 compilers emit. The guest writes meson's
# testlog.json to the shared results directory, and the host counts it.
#
#   sh scripts/arm64-test.sh            the arm64 tests (ARM64_TESTS below)
#   sh scripts/arm64-test.sh --smoke    the smoke subset CI runs
#   sh scripts/arm64-test.sh --bench    bench/arm64/run.sh (instruction counts)
#   sh scripts/arm64-test.sh TEST...    these meson tests (names as in
#                                       `meson test --list`)
#
#   USDTKIT_ARM64_OUT   where the guest's results and logs go (default: a
#                       fresh temporary directory, kept and named at the end)
#   USDTKIT_TIME_FACTOR the tests' wall-clock bounds' factor in the guest
#                       (default 20: TCG runs 20-50 times slower than the host)
# and scripts/arm64-vm.sh's variables (cache, CPUs, memory, timeout).
set -eu
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
	exec sudo -E sh "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# The arm64 guest tests (tests/arm64: arm64 operands, register fetches,
# the fire stub, ptrace to main), then the existing kernel suites' tests
# that hold on any architecture.
ARM64_TESTS="a64-sdt
consumers-gcc consumers-clang semaphore
t-drti-register t-drti-e2e t-link-e2e
t-helperd-register t-helperd-consumers
t-list-pid t-list-create t-list-daemon
t-helper-register.sh helper-tracefs-errors
t-runtime-api t-runtime-bpftrace t-runtime-helper t-runtime-example
t-py-api t-py-bpftrace t-py-daemon t-node-api t-node-bpftrace"
# CI's smoke subset: one test of each kind, a few minutes under TCG.
ARM64_SMOKE="a64-sdt"

bench=""
case ${1:-} in
--smoke) tests=$ARM64_SMOKE ;;
--bench) bench=1; tests="" ;;
"") tests=$ARM64_TESTS ;;
-*) echo "usage: $0 [--smoke | --bench | TEST...]" >&2; exit 2 ;;
*) tests=$* ;;
esac

out=${USDTKIT_ARM64_OUT:-$(mktemp -d /tmp/usdtkit-arm64-out.XXXXXX)}
mkdir -p "$out"
rm -f "$out/testlog.json" "$out/build.log"
factor=${USDTKIT_TIME_FACTOR:-20}

# The guest's job (POSIX sh; /src is the checkout, /out is $out).
cat >"$out/job.in" <<EOF
set -u
export USDTKIT_TIME_FACTOR=$factor
B=/root/build
t0=\$(cut -d' ' -f1 /proc/uptime)
if ! { meson setup "\$B" /src -Dwerror=true && nice ninja -C "\$B"; } >/out/build.log 2>&1; then
	tail -n 60 /out/build.log
	echo "arm64: the build failed (build.log above)"
	exit 1
fi
echo "arm64: built \$(cut -d' ' -f1 /proc/uptime) s after boot (started at \$t0 s)"
if [ -n "$bench" ]; then
	bash /src/bench/arm64/run.sh "\$B"
	exit \$?
fi
meson test -C "\$B" --no-rebuild --print-errorlogs --num-processes 2 \\
	--timeout-multiplier $factor $tests
rc=\$?
cp "\$B/meson-logs/testlog.json" "\$B/meson-logs/testlog.txt" /out/ 2>/dev/null
exit \$rc
EOF

start=$(date +%s)
sh scripts/arm64-vm.sh build
echo "arm64: machine ready after $(($(date +%s) - start)) s ($(sh scripts/arm64-vm.sh path))" >&2
sh scripts/arm64-vm.sh run "$out/job.in" "$out" || true
echo "arm64: done after $(($(date +%s) - start)) s; logs in $out" >&2
[ -z "$bench" ] || exit 0
python3 scripts/summary.py --prefix=arm64/ "$out/testlog.json"
