#!/bin/sh
# Runs usdtkit's whole test suite twice: once on the normal build, once on a
# sanitizer build (AddressSanitizer, with LeakSanitizer, and
# UndefinedBehaviorSanitizer), then the fuzz suite on a fuzz build (clang,
# -Dfuzz=enabled: the libFuzzer targets, built by meson), and ends with ONE
# line for all runs: "N passed, N failed, N skipped" (the sanitizer run's
# tests are named "asan/usdtkit:SUITE / TEST" there, the fuzz run's
# "fuzz/usdtkit:...").
#
# The sanitizer build is `meson setup -Db_sanitize=address,undefined
# -Db_lundef=false` with clang (CC_SAN): with gcc, UBSan's runtime is a
# library apart from ASan's and ignores log_path, so a report of a process
# whose stderr a test discards would vanish; clang links one runtime that
# honours it. The top-level meson.build makes UBSan fatal
# (-fno-sanitize-recover=undefined); tests/meson.build sets ASAN_OPTIONS and
# UBSAN_OPTIONS for the tests; tests/lib/common.sh sends every report of the
# processes a shell test starts into its scratch directory and fails the test
# when one appears. Tests that cannot work on sanitized binaries (valgrind,
# address-space limits) adapt to $USDTKIT_SANITIZE. The fuzz targets exist
# only in the fuzz build (tests/fuzz/meson.build). The fresh, packaging and
# realworld suites are not run twice (SAN_SKIP_SUITES below): fresh
# (scripts/fresh-check.sh) builds the committed tree in a fresh Debian 12
# chroot of its own, packaging builds the packages from it, and realworld
# measures the real tools on whole projects.
#
#   BUILDDIR          the normal build directory (default: build)
#   SAN_BUILDDIR      the sanitizer build directory (default: $BUILDDIR-san)
#   MESON_SETUP_ARGS  extra `meson setup` arguments for both (CI: -Dwerror=true)
#   CC_SAN            the sanitizer build's compiler (default: clang)
#   FUZZ_BUILDDIR     the fuzz build directory (default: $BUILDDIR-fuzz)
#   CC_FUZZ           the fuzz build's compiler (default: clang; libFuzzer is clang's)
#   USDTKIT_RUNS      "plain san fuzz" (default), or some of them: which runs
#   USDTKIT_SKIP_SUITES  suites no run runs (the fresh-machine check, which
#                     runs this script inside its chroot, leaves out itself)
#   USDTKIT_ARM64     1: the plain run includes suite arm64 (scripts/arm64-test.sh --smoke),
#                     building the emulated machine first if it is not cached;
#                     cached (CI): the same, skipped when no machine is cached
#   USDTKIT_PLAIN_IN_FRESH  1 (CI: .ci/run): the plain run's tests run once, in
#                     the fresh machine, not a second time here (below)
set -eu
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
	exec sudo -E sh "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh scripts/deps.sh
builddir=${BUILDDIR:-build}
sanbuilddir=${SAN_BUILDDIR:-$builddir-san}
fuzzbuilddir=${FUZZ_BUILDDIR:-$builddir-fuzz}
runs=${USDTKIT_RUNS:-plain san fuzz}
rc=0
logs=""
# Suites the sanitizer run leaves out, because they do not test this build:
# fuzz (the fuzz run's; its targets are built with sanitizers anyway),
# fresh and packaging (they build the committed tree in scratch directories
# and chroots of their own), realworld, and arm64 (it builds the tree in
# an emulated arm64 machine of its own: tests/arm64/README.md). And sdt and
# style, which test no program of this build: sdt compiles its own programs
# from tests/sdt with the system's gcc and clang (its one `dtrace -h`, in
# t-warnings, is the header suite's daily work, which this run does run),
# style reads the sources. Running them again here repeated about 7 minutes
# of test time (3 to 4 of wall time) of identical compiles.
SAN_SKIP_SUITES="fuzz fresh realworld packaging arm64 sdt style"

for run in $runs; do
	case $run in
	plain)
		dir=$builddir
		setup=""
		cc=${CC:-}
		prefix=""
		# The emulated arm64 machine (suite arm64, tests/arm64/README.md)
		# only with USDTKIT_ARM64=1, or =cached (CI: when the machine is
		# already built): its first build takes half an hour and more on
		# this 2-core machine; the smoke subset then takes minutes.
		arm64=""
		case ${USDTKIT_ARM64:-} in 1 | cached) arm64=1 ;; esac
		testargs="--no-suite arm64"
		[ -n "$arm64" ] && testargs=""
		# The fresh-machine check (suite fresh, scripts/fresh-check.sh)
		# runs this script's plain run inside a fresh Debian 12 chroot,
		# from a clone under /tmp: every suite but fresh, packaging and
		# realworld, on the same kernel, built from the same sources by
		# the same compilers as here (deps.sh installed them in both).
		# CI sets USDTKIT_PLAIN_IN_FRESH=1 so that those tests run once,
		# there, where they prove more (no package of earlier work, a
		# checkout under /tmp), instead of twice in its 90 minutes: here
		# the plain run is then fresh, packaging and realworld, and the
		# summary counts the tests run inside one by one ("fresh/...").
		# This build is still made, with CI's -Werror, before them.
		freshlog=""
		if [ "${USDTKIT_PLAIN_IN_FRESH:-}" = 1 ]; then
			testargs="--suite fresh --suite packaging --suite realworld"
			[ -n "$arm64" ] && testargs="$testargs --suite arm64"
			case $dir in /*) freshlog=$dir ;; *) freshlog=$top/$dir ;; esac
			freshlog=$freshlog/meson-logs/fresh-testlog.json
		fi
		;;
	san)
		dir=$sanbuilddir
		setup="-Db_sanitize=address,undefined -Db_lundef=false"
		cc=${CC_SAN:-clang}
		prefix="--prefix=asan/"
		# Sanitized programs run 2-3 times slower.
		testargs="--timeout-multiplier 3"
		for s in $SAN_SKIP_SUITES; do testargs="$testargs --no-suite $s"; done
		;;
	fuzz)
		# Every object of this build is instrumented for libFuzzer (top
		# meson.build): only its fuzz suite is run.
		dir=$fuzzbuilddir
		setup="-Dfuzz=enabled"
		cc=${CC_FUZZ:-clang}
		prefix="--prefix=fuzz/"
		testargs="--suite fuzz"
		;;
	*)
		echo "USDTKIT_RUNS: unknown run '$run' (plain, san, fuzz)" >&2
		exit 2
		;;
	esac
	for s in ${USDTKIT_SKIP_SUITES:-}; do testargs="$testargs --no-suite $s"; done
	if [ ! -f "$dir/build.ninja" ]; then
		# shellcheck disable=SC2086
		if [ -n "$cc" ]; then
			CC=$cc meson setup "$dir" $setup ${MESON_SETUP_ARGS:-} >/dev/null
		else
			meson setup "$dir" $setup ${MESON_SETUP_ARGS:-} >/dev/null
		fi
	fi
	logs="$logs $prefix $dir/meson-logs/testlog.json"
	rm -f "$dir/meson-logs/testlog.json"
	if [ "$run" = plain ] && [ -n "$freshlog" ]; then
		logs="$logs --prefix=fresh/ $freshlog"
		rm -f "$freshlog"
	fi
	ninja -C "$dir" || { rc=1; continue; }
	start=$(date +%s)
	# shellcheck disable=SC2086
	USDTKIT_FRESH_TESTLOG=${freshlog:-} \
		meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2 $testargs || rc=$?
	echo "usdtkit: the $run run took $(($(date +%s) - start)) s" >&2
done
# shellcheck disable=SC2086
python3 scripts/summary.py $logs || rc=1
exit $rc
