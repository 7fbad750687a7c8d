#!/bin/sh
# Runs usdtkit's whole test suite: installs what is missing, builds, tests,
# and ends with the line "N passed, N failed, N skipped".
#   BUILDDIR   build directory (default: build)
#   MESON_SETUP_ARGS  extra `meson setup` arguments (CI passes -Dwerror=true)
set -eu
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
	exec sudo -E sh "$0" "$@"
fi
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh scripts/deps.sh
builddir=${BUILDDIR:-build}
if [ ! -f "$builddir/build.ninja" ]; then
	# shellcheck disable=SC2086
	meson setup "$builddir" ${MESON_SETUP_ARGS:-} >/dev/null
fi
ninja -C "$builddir"
rc=0
meson test -C "$builddir" --no-rebuild --print-errorlogs --num-processes 2 || rc=$?
python3 scripts/summary.py "$builddir/meson-logs/testlog.json" || rc=1
exit $rc
