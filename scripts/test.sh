#!/bin/sh
# usdtkit's tests. With no argument, the README's test command: the quick
# run, every component's tests on the normal build, on the real kernel and
# the real tracers (every suite but the heavy parts below), in about six to fifteen
# minutes on a 2-core machine (tests/README.md has the measured times).
# The heavier parts are one flag away, each selectable alone or together:
#
#   sh scripts/test.sh                 the quick run (same as --plain)
#   sh scripts/test.sh --all           every part below, the quick run included
#   sh scripts/test.sh PART...         only the parts named:
#     --plain      the quick run
#     --san        every suite that runs this build's programs, again on a
#                  clang AddressSanitizer + UndefinedBehaviorSanitizer build
#                  (build-san), where any sanitizer report fails its test
#     --fuzz       the libFuzzer targets (clang, -Dfuzz=enabled: build-fuzz),
#                  each for $USDTKIT_FUZZ_SECONDS (default 20)
#     --fresh      the README's two commands in a fresh Debian 12 chroot
#                  (scripts/fresh-check.sh: debootstrap, demo.sh, test.sh)
#     --packaging  the Debian and RPM packages built and checked
#     --realworld  memcached rebuilt with both tools (the other projects:
#                  sh scripts/realworld.sh)
#     --arm64      the arm64 smoke subset on the emulated machine, built
#                  first if it is not cached (half an hour);
#                  --arm64=cached runs it only when cached, else skips
#     --ci         what CI (.ci/run) runs: --fresh (the quick run happens
#                  inside it, on the fresh machine), --packaging,
#                  --realworld, --arm64=cached, and the sanitizer and fuzz
#                  runs cut to CI's budget (SAN_CI_SUITES below, fuzz 10 s a
#                  target). tests/README.md, "In CI", has the minutes.
#
# It ends with ONE line for all parts: "N passed, N failed, N skipped" (the
# sanitizer run's tests are named "asan/usdtkit:SUITE / TEST", the fuzz
# run's "fuzz/...", those run inside the fresh machine "fresh/...").
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
# address-space limits) adapt to $USDTKIT_SANITIZE.
#
#   BUILDDIR          the normal build directory (default: build)
#   SAN_BUILDDIR      the sanitizer build directory (default: $BUILDDIR-san)
#   FUZZ_BUILDDIR     the fuzz build directory (default: $BUILDDIR-fuzz)
#   MESON_SETUP_ARGS  extra `meson setup` arguments for all (CI: -Dwerror=true)
#   CC_SAN, CC_FUZZ   their compilers (default: clang; libFuzzer is clang's)
#   USDTKIT_FUZZ_SECONDS  seconds each fuzz target runs (default 20; --ci: 10)
set -eu
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
	exec sudo -E sh "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# Suites that are parts of their own, not of the quick run: each builds or
# boots a machine, a package or a whole project (minutes to half an hour).
HEAVY_SUITES="fresh packaging realworld arm64"
# Suites the sanitizer run leaves out, because they run no program of that
# build: the heavy parts and fuzz (their own builds), sdt (compiles its own
# programs from tests/sdt with the system's gcc and clang; its one
# `dtrace -h` is the header suite's daily work) and style (reads sources).
SAN_SKIP_SUITES="$HEAVY_SUITES fuzz sdt style"
# CI's sanitizer run: the suites whose tests run usdtkit's own C code paths
# that the others only repeat. The front ends (provider, header, link, list,
# consumer), the daemon (helper, helperd, fault, security), drti and the
# runtime providers. Left to `--san` (and so to --all): dropin (real
# projects' .d files through the same front ends header/link test), install
# (meson install and build systems: no new code path), checkers (it builds
# its own programs with sanitizers of its own), soak and crash (long runs of
# paths helperd and security cover), runtime-node and runtime-python (the
# bindings' languages, over the runtime library the runtime suite runs
# sanitized). tests/README.md, "In CI", has each suite's minutes.
SAN_CI_SUITES="provider header link list consumer helper helperd fault security drti runtime runtime-stapsdt"

usage() {
	sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
parts=""
ci=""
arm64=""
for a in "$@"; do
	case $a in
	--all) parts="plain san fuzz fresh packaging realworld arm64" ;;
	--plain | --quick) parts="$parts plain" ;;
	--san) parts="$parts san" ;;
	--fuzz) parts="$parts fuzz" ;;
	--fresh) parts="$parts fresh" ;;
	--packaging) parts="$parts packaging" ;;
	--realworld) parts="$parts realworld" ;;
	--arm64) parts="$parts arm64" arm64=1 ;;
	--arm64=cached) parts="$parts arm64" arm64=cached ;;
	--ci)
		parts="$parts fresh packaging realworld arm64 san fuzz"
		ci=1 arm64=${arm64:-cached}
		;;
	-h | --help) usage ;;
	*)
		echo "scripts/test.sh: unknown argument '$a'" >&2
		usage
		;;
	esac
done
[ -n "$parts" ] || parts=plain
[ -n "$arm64" ] || arm64=1
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

sh scripts/deps.sh
builddir=${BUILDDIR:-build}
sanbuilddir=${SAN_BUILDDIR:-$builddir-san}
fuzzbuilddir=${FUZZ_BUILDDIR:-$builddir-fuzz}
fuzzsecs=${USDTKIT_FUZZ_SECONDS:-20}
[ -z "$ci" ] || fuzzsecs=${USDTKIT_FUZZ_SECONDS:-10}
rc=0
logs=""
t_all=$(date +%s)

# run NAME DIR PREFIX CC SETUP TESTARGS [ENV...]: one build, one meson test
# run, its log added to the summary.
run() {
	name=$1 dir=$2 prefix=$3 cc=$4 setup=$5 testargs=$6
	shift 6
	if [ ! -f "$dir/build.ninja" ]; then
		# shellcheck disable=SC2086
		if [ -n "$cc" ]; then
			CC=$cc meson setup "$dir" $setup ${MESON_SETUP_ARGS:-} >/dev/null
		else
			meson setup "$dir" $setup ${MESON_SETUP_ARGS:-} >/dev/null
		fi
	fi
	log=$dir/meson-logs/testlog-$name.json
	logs="$logs --prefix=$prefix $log"
	rm -f "$log"
	ninja -C "$dir" || {
		rc=1
		return
	}
	start=$(date +%s)
	# shellcheck disable=SC2086
	env "$@" meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2 \
		--logbase "testlog-$name" $testargs || rc=$?
	echo "usdtkit: the $name part took $(($(date +%s) - start)) s" >&2
}

if has plain; then
	args=""
	for s in $HEAVY_SUITES; do args="$args --no-suite $s"; done
	run plain "$builddir" "" "${CC:-}" "" "$args"
fi
# The heavy parts of the normal build, in one meson run: fresh, packaging
# and arm64 are each alone on the machine (is_parallel: false).
heavy=""
for s in fresh packaging realworld arm64; do
	has "$s" && heavy="$heavy --suite $s"
done
if [ -n "$heavy" ]; then
	freshlog=""
	if has fresh; then
		# The fresh machine's own quick run is counted test by test,
		# named "fresh/...": scripts/fresh-check.sh copies its log here.
		case $builddir in /*) freshlog=$builddir ;; *) freshlog=$top/$builddir ;; esac
		freshlog=$freshlog/meson-logs/fresh-testlog.json
		rm -f "$freshlog"
	fi
	run heavy "$builddir" "" "${CC:-}" "" "$heavy" \
		USDTKIT_FRESH_TESTLOG="$freshlog" USDTKIT_ARM64="$arm64"
	[ -z "$freshlog" ] || logs="$logs --prefix=fresh/ $freshlog"
fi
if has san; then
	# Sanitized programs run 2-3 times slower.
	args="--timeout-multiplier 3"
	if [ -n "$ci" ]; then
		for s in $SAN_CI_SUITES; do args="$args --suite $s"; done
	else
		for s in $SAN_SKIP_SUITES; do args="$args --no-suite $s"; done
	fi
	run san "$sanbuilddir" asan/ "${CC_SAN:-clang}" \
		"-Db_sanitize=address,undefined -Db_lundef=false" "$args"
fi
if has fuzz; then
	# Every object of this build is instrumented for libFuzzer (top
	# meson.build): only its fuzz suite is run.
	run fuzz "$fuzzbuilddir" fuzz/ "${CC_FUZZ:-clang}" "-Dfuzz=enabled" "--suite fuzz" \
		USDTKIT_FUZZ_SECONDS="$fuzzsecs"
fi
echo "usdtkit: all parts ($parts) took $(($(date +%s) - t_all)) s" >&2
# shellcheck disable=SC2086
python3 scripts/summary.py $logs || rc=1
exit $rc
