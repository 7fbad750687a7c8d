#!/bin/sh
# Runs usdtkit's kernel suites on an emulated arm64 Debian 12 machine
# (scripts/arm64-vm.sh) and ends with the line CI reads: "N passed, N
# failed, N skipped" (scripts/summary.py), the tests named arm64/SUITE/TEST.
#
# Theory: usdtkit itself is cross-built on the host (aarch64-linux-gnu-gcc
# against the machine's own headers and libraries, `scripts/arm64-vm.sh
# sysroot`): built in the guest it took half an hour under TCG on a loaded
# machine, cross-built it takes a minute or two. The guest then runs the
# chosen meson tests on that build directory (shared over 9p at the same
# path as on the host, as is the checkout, read-only), on an arm64 kernel,
# with the arm64 builds of gcc, clang, bpftrace, gdb, perf and valgrind:
# every program a test compiles is compiled there by arm64 gcc or clang, so
# the operands in the notes are the ones arm64 compilers emit. meson's
# testlog.json lands in the shared build directory, and the host counts it.
#
#   sh scripts/arm64-test.sh            the arm64 tests (ARM64_TESTS below)
#   sh scripts/arm64-test.sh --smoke    the smoke subset CI runs
#   sh scripts/arm64-test.sh --bench    bench/arm64/run.sh (instruction counts)
#   sh scripts/arm64-test.sh --check    the first step only (scripts/arm64-vm.sh
#                                       check: tools, binfmt_misc, packages),
#                                       what the fresh-machine check runs
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
--smoke)
	tests=$ARM64_SMOKE
	# Four of a64-sdt's builds, which between them emit every operand kind.
	: "${A64_SDT_CONFIGS:=ours:gcc:-O2 ours-nor:gcc:-O0 ours-nor:gcc:-O2 stap:clang:-O2}"
	;;
--bench) bench=1; tests="" ;;
--check)
	sh scripts/deps.sh
	exec sh scripts/arm64-vm.sh check
	;;
"") tests=$ARM64_TESTS ;;
-*) echo "usage: $0 [--smoke | --bench | --check | TEST...]" >&2; exit 2 ;;
*) tests=$* ;;
esac
# One line: the names go into the guest's job as one command's arguments
# (a newline there ended the command at the list's first line).
# shellcheck disable=SC2086
tests=$(echo $tests)

out=${USDTKIT_ARM64_OUT:-$(mktemp -d /tmp/usdtkit-arm64-out.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
factor=${USDTKIT_TIME_FACTOR:-20}
start=$(date +%s)
sh scripts/arm64-vm.sh build
echo "arm64: machine ready after $(($(date +%s) - start)) s ($(sh scripts/arm64-vm.sh path))" >&2

# The cross build, on the host (PATH without any user's Python: the tests
# run the python3 meson finds, which must exist in the guest).
sysroot=$(sh scripts/arm64-vm.sh sysroot)
cat >"$out/cross.ini" <<EOF
[binaries]
c = ['aarch64-linux-gnu-gcc', '--sysroot=$sysroot']
ar = 'aarch64-linux-gnu-ar'
strip = 'aarch64-linux-gnu-strip'
pkgconfig = 'pkg-config'
[properties]
sys_root = '$sysroot'
pkg_config_libdir = ['$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig', '$sysroot/usr/share/pkgconfig']
needs_exe_wrapper = false
[host_machine]
system = 'linux'
cpu_family = 'aarch64'
cpu = 'aarch64'
endian = 'little'
EOF
B="$out/build"
rm -rf "$B"
if ! { env PATH=/usr/sbin:/usr/bin:/sbin:/bin meson setup --cross-file "$out/cross.ini" \
	-Dwerror=true "$B" "$top" && nice ninja -C "$B"; } >"$out/build.log" 2>&1; then
	tail -n 60 "$out/build.log"
	echo "arm64: the cross build failed (above; $out/build.log)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
echo "arm64: cross-built after $(($(date +%s) - start)) s" >&2

# The guest's job (POSIX sh; the checkout and $out are at their host paths).
cat >"$out/job.in" <<EOF
set -u
export USDTKIT_TIME_FACTOR=$factor
${A64_SDT_CONFIGS:+export A64_SDT_CONFIGS='$A64_SDT_CONFIGS'}
cd "$top"
if [ -n "$bench" ]; then
	bash "$top/bench/arm64/run.sh" "$B"
	exit \$?
fi
# Through cat: the console is a tty, where meson draws a progress line.
meson test -C "$B" --no-rebuild --print-errorlogs --num-processes 2 \\
	--timeout-multiplier $factor $tests 2>&1 | cat
EOF

sh scripts/arm64-vm.sh run "$out/job.in" "$out" || true
echo "arm64: done after $(($(date +%s) - start)) s; logs in $out" >&2
[ -z "$bench" ] || exit 0
# Every test asked for must have a result: one that did not run (a job cut
# by the timeout, a name the guest's meson does not know) counts as failed.
# shellcheck disable=SC2086
asked=$(meson test -C "$B" --no-rebuild --list $tests 2>/dev/null | grep -c " / " || true)
ran=$(grep -c . "$B/meson-logs/testlog.json" 2>/dev/null || true)
last=$(python3 scripts/summary.py --prefix=arm64/ "$B/meson-logs/testlog.json" | tail -n 1) || true
# shellcheck disable=SC2046
set -- $(echo "$last" | tr -d ,)
passed=${1:-0} failed=${3:-0} skipped=${5:-0}
if [ "${ran:-0}" -lt "$asked" ]; then
	echo "arm64: $asked tests asked for, $ran have a result (the guest's log: $out)" >&2
	failed=$((failed + asked - ran))
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
