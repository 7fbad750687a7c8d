#!/bin/sh
# The fresh-machine check: the README's two commands, `sh scripts/demo.sh`
# and then `sh scripts/test.sh`, in that order, on a fresh Debian 12 machine,
# from a clone under /tmp whose path has a space, `/tmp/usdt kit`, as a new
# user runs them: the demo must work and
# the tests must end with 0 failed. A machine that has been used for
# development cannot show it: packages installed by hand hide the ones
# deps.sh forgets, and its checkout is not under /tmp (a test that remounted
# /tmp noexec failed only there) nor under a path with a space (a #! line,
# unquoted -I flags and node-gyp's Makefiles broke there).
#
# So, as root:
#   1. debootstrap a minimal Debian 12 (bookworm, --variant=minbase: only
#      the Essential and "required" packages and apt) into a scratch
#      directory under /var/tmp, outside any checkout;
#   2. `git clone` the repository into it at `/tmp/usdt kit` and check out the
#      commit under test (HEAD: uncommitted and ignored files cannot help);
#   3. in a private mount namespace, with /proc, /dev and the host's /sys
#      (the kernel's tracing: tracefs, BPF, perf, as on a real machine) and
#      nothing else of the host, chroot into it and run
#      tests/fresh/in-chroot.sh: the two commands (scripts/deps.sh, which
#      they run, is the only thing that installs anything), with the test
#      runs restricted (that script's head comment says which and why);
#   4. remove the scratch directory. The namespace dies with its last
#      process, taking the mounts with it: the host never sees them, so
#      nothing can leak into it and the removal cannot reach through them.
#      No PID namespace: the tests inside compare the PIDs tracefs reports,
#      which are the host's (t-runtime-stress failed in one), and they clean
#      up their processes themselves. They share the host's kernel as every
#      test does: unique event names, private daemons.
#
# Downloaded .deb files are kept in a cache on the host (USDTKIT_FRESH_CACHE,
# default /var/cache/usdtkit-fresh; empty: none) and hard-linked (or copied)
# into the chroot's apt archive before deps.sh runs: apt still has to
# install every one of them, so the cache saves the download and hides no
# missing package. Mirror: USDTKIT_FRESH_MIRROR (default the first deb.debian
# style URI of the host's apt sources, else http://deb.debian.org/debian);
# the chroot gets the host's apt sources (main, updates, security) when they
# exist. USDTKIT_FRESH_TESTLOG=FILE: the quick run's test log copied there
# (scripts/test.sh --fresh sets it). Exit 0 when the demo worked and no test
# failed, 1 otherwise. Its cost is in tests/README.md; meson runs it as the
# test fresh/fresh-debian12 (suite fresh: `sh scripts/test.sh --fresh`).
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "fresh-check: needs root (debootstrap, chroot, mount)" >&2
	exit 1
fi
top=$(cd "$(dirname "$0")/.." && pwd)
for c in debootstrap unshare chroot git flock; do
	command -v "$c" >/dev/null || {
		echo "fresh-check: $c is not installed (scripts/deps.sh installs debootstrap)" >&2
		exit 1
	}
done
. "$top/scripts/lib/head.sh"
commit=$(head_commit fresh-check "$top")

USDTKIT_CHROOT_MIRROR=${USDTKIT_FRESH_MIRROR:-${USDTKIT_CHROOT_MIRROR:-}}
. "$top/scripts/lib/chroot.sh"
cache=$chroot_cache

# A check killed by SIGKILL (a CI timeout) leaves its scratch directory:
# the next one removes those whose check is gone. Their namespaces died
# with their processes, so they hold no mounts.
for old in /var/tmp/usdtkit-fresh.*; do
	[ -f "$old/owner" ] || continue
	kill -0 "$(cat "$old/owner")" 2>/dev/null || rm -rf "$old"
done
scratch=$(mktemp -d /var/tmp/usdtkit-fresh.XXXXXX)
echo $$ >"$scratch/owner"
cleanup() {
	rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
root=$scratch/root
start=$(date +%s)

step() {
	echo "fresh-check: [$(($(date +%s) - start)) s] $*"
}

step "debootstrap --variant=minbase bookworm from $chroot_mirror"
chroot_create "$root" || { echo "fresh-check: FAIL: debootstrap failed (log above)" >&2; exit 1; }

clone="/tmp/usdt kit"
git clone -q "$top" "$root$clone" && git -C "$root$clone" checkout -q --detach "$commit" ||
	{ echo "fresh-check: FAIL: cannot clone $top at $commit" >&2; exit 1; }
step "testing commit $commit in $root, at '$clone'"

# The chroot starts with an empty environment (chroot_run): what
# in-chroot.sh reads of the caller's, by hand, goes in a file.
{
	[ -z "${USDTKIT_FRESH_ARGS+x}" ] || printf 'USDTKIT_FRESH_ARGS=%s\n' "$USDTKIT_FRESH_ARGS"
} >"$root/tmp/usdtkit-fresh.env"

rc=0
CHROOT_SYS=1 chroot_run "$root" bash "$clone/tests/fresh/in-chroot.sh" || rc=$?
# scripts/test.sh --fresh (CI's --ci) counts the tests of the quick run
# inside one by one: their log, out of the chroot.
if [ -n "${USDTKIT_FRESH_TESTLOG:-}" ]; then
	cp "$root$clone/build/meson-logs/testlog-plain.json" "$USDTKIT_FRESH_TESTLOG" ||
		echo "fresh-check: the plain run inside left no test log" >&2
fi

if [ -n "$cache" ]; then
	chroot_keep_debs "$root"
	# After a complete run, versions apt no longer wanted (superseded by
	# updates) leave the cache, which so stays at one install's size.
	if [ "$rc" -eq 0 ]; then
		for f in "$cache"/apt/*.deb; do
			[ -e "$root/var/cache/apt/archives/${f##*/}" ] || rm -f "$f"
		done
	fi
fi
rm -rf "$scratch"
step "done: $([ "$rc" -eq 0 ] && echo passed || echo "FAILED (exit $rc)")"
[ "$rc" -eq 0 ] || exit 1
