#!/bin/sh
# The fresh-machine check: proves that `sh scripts/deps.sh` alone is enough to
# build usdtkit and run its tests on a fresh Debian 12 machine. The README
# promises it; a machine that has been used for development cannot show it,
# because packages installed by hand hide the ones deps.sh forgets.
#
# So, as root:
#   1. debootstrap a minimal Debian 12 (bookworm, --variant=minbase: only
#      the Essential and "required" packages and apt) into a scratch
#      directory under /var/tmp, outside any checkout;
#   2. put the repository's committed tree (`git archive HEAD`: uncommitted
#      and ignored files cannot help) in it, at /usdtkit;
#   3. in a private mount and PID namespace, with /proc and /dev mounted and
#      nothing else of the host (no /sys, so no tracefs), chroot into it and
#      run tests/fresh/in-chroot.sh: `sh scripts/deps.sh`, the only thing
#      that installs anything, then the build and every test that needs no
#      kernel tracing (that script's head comment says which and why);
#   4. remove the scratch directory. The namespaces die with their last
#      process, taking the mounts and any process a test left behind with
#      them: the host never sees the mounts, so nothing can leak into it and
#      the removal cannot reach through them.
#
# Downloaded .deb files are kept in a cache on the host (USDTKIT_FRESH_CACHE,
# default /var/cache/usdtkit-fresh; empty: none) and hard-linked (or copied)
# into the chroot's apt archive before deps.sh runs: apt still has to
# install every one of them, so the cache saves the download and hides no
# missing package. Mirror: USDTKIT_FRESH_MIRROR (default the first deb.debian
# style URI of the host's apt sources, else http://deb.debian.org/debian);
# the chroot gets the host's apt sources (main, updates, security) when they
# exist. Exit 0 when every test passed, 1 otherwise. On a 2-core machine it
# takes about 3 minutes (debootstrap 49 s, deps.sh 49 s, build 5 s, tests
# 79 s), and 6 under a load of 7; meson runs it as the test
# fresh/fresh-debian12 in the plain run of scripts/test.sh (README.md,
# "Building by hand").
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

mkdir "$root/usdtkit"
git -C "$top" archive --format=tar "$commit" | tar -x -C "$root/usdtkit"
step "testing commit $commit in $root"

rc=0
chroot_run "$root" bash /usdtkit/tests/fresh/in-chroot.sh || rc=$?

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
