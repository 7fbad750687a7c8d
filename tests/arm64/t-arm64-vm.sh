#!/bin/bash
# The arm64 suites, run from the x86-64 host (suite arm64: `sh
# scripts/test.sh --arm64`, USDTKIT_ARM64=1, or --arm64=cached): scripts/arm64-test.sh boots the emulated arm64
# machine (built and cached by scripts/arm64-vm.sh on first use), builds
# this checkout in it and runs the arm64 tests there. USDTKIT_ARM64_FULL=1
# runs the whole list; otherwise the smoke subset (see that script), which
# keeps CI's run well inside its limit. Passes only if the guest's closing
# line says nothing failed and something passed.
. "$USDTKIT_SRCDIR/tests/lib/common.sh"
for c in qemu-system-aarch64 qemu-aarch64-static mmdebstrap; do
	command -v $c >/dev/null || fail "$c is not installed (scripts/deps.sh installs it)"
done
[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap, binfmt_misc)"
# USDTKIT_ARM64=cached (CI): run only on a machine already built for this
# recipe; building one takes half an hour, which CI's 90 minutes cannot
# spare. Reported as skipped, with the command that builds it.
if [ "${USDTKIT_ARM64:-}" = cached ]; then
	vm=$(sh "$USDTKIT_SRCDIR/scripts/arm64-vm.sh" path)
	[ -f "$vm/ok" ] || skip "no arm64 machine cached for this recipe ($vm): sh scripts/arm64-vm.sh build (about 30 minutes) makes one"
fi
args=--smoke
[ "${USDTKIT_ARM64_FULL:-}" = 1 ] && args=""
USDTKIT_ARM64_OUT="$T/out" sh "$USDTKIT_SRCDIR/scripts/arm64-test.sh" $args >"$T/run.log" 2>&1 || true
cat "$T/run.log"
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$T/run.log" | tail -1)
[ -n "$last" ] || fail "the arm64 run printed no closing line"
read -r p _ f _ <<<"${last//,/}"
[ "$f" -eq 0 ] || fail "arm64: $last"
[ "$p" -gt 0 ] || fail "arm64: nothing passed ($last)"
echo "ok: arm64 (emulated): $last"
