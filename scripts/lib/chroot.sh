# Throwaway Debian 12 chroots (sourced by scripts/fresh-check.sh and
# packaging/debian/test-rebuild.sh and test-lifecycle.sh). Nothing here
# touches the host's package state: debootstrap writes only under the
# chroot, apt runs inside it, and every mount is made in a mount namespace of
# the caller's that dies with it.
#
#   chroot_create ROOT [PACKAGE,...]   debootstrap --variant=minbase bookworm,
#                                      plus the packages named, apt ready
#   chroot_run ROOT CMD [ARG]...       CMD run in the chroot, in mount and
#                                      PID namespaces of its own, with /proc,
#                                      /dev and a clean environment; with
#                                      CHROOT_SYS=1 also the host's /sys
#                                      (tracefs, BPF, perf: the kernel's
#                                      tracing, as on a real machine) and
#                                      no PID namespace of its own: tests
#                                      compare the PIDs tracefs reports
#                                      (global ones) with their programs'
#   chroot_keep_debs ROOT              the chroot's downloaded .debs into the
#                                      cache, for the next chroot
#
# Mirror: USDTKIT_CHROOT_MIRROR, else the host's first deb.debian.org-style
# URI (/etc/apt/sources.list.d/*.sources), else deb.debian.org. Cache of
# .debs (debootstrap's and apt's, shared with scripts/fresh-check.sh):
# USDTKIT_FRESH_CACHE (default /var/cache/usdtkit-fresh; empty: none).

chroot_mirror=${USDTKIT_CHROOT_MIRROR:-}
if [ -z "$chroot_mirror" ]; then
	chroot_mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/\{0,1\}$/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
	[ -n "$chroot_mirror" ] || chroot_mirror=http://deb.debian.org/debian
fi
chroot_cache=${USDTKIT_FRESH_CACHE-/var/cache/usdtkit-fresh}

chroot_create() { # root [include]
	_root=$1
	_include=${2:+--include=$2}
	_ds_cache=""
	if [ -n "$chroot_cache" ]; then
		mkdir -p "$chroot_cache/debootstrap" "$chroot_cache/apt"
		_ds_cache="--cache-dir=$chroot_cache/debootstrap"
	fi
	# The lock: two debootstraps at once would write the same cached .deb.
	# unshare --mount: the /proc and /sys debootstrap mounts in the target
	# go with the namespace, even if it is killed half-way.
	# shellcheck disable=SC2086
	if ! flock "${chroot_cache:-$(dirname "$_root")}/.lock" unshare --mount --propagation private \
		debootstrap --variant=minbase $_ds_cache $_include bookworm "$_root" "$chroot_mirror" \
		>"$_root.debootstrap.log" 2>&1; then
		tail -30 "$_root.debootstrap.log" >&2
		[ -f "$_root/debootstrap/debootstrap.log" ] && tail -30 "$_root/debootstrap/debootstrap.log" >&2
		echo "debootstrap of $_root from $chroot_mirror failed (log above)" >&2
		return 1
	fi
	# The host's sources (bookworm, -updates, -security) and the deb-src of
	# bookworm itself (the security archive's sources are not reachable
	# here), its resolver; dpkg without an fsync per file (a throwaway chroot).
	if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
		cp /etc/apt/sources.list.d/*.sources "$_root/etc/apt/sources.list.d/"
		rm -f "$_root/etc/apt/sources.list"
	fi
	echo "deb-src $chroot_mirror bookworm main" >>"$_root/etc/apt/sources.list"
	cp -L /etc/resolv.conf "$_root/etc/resolv.conf"
	# The host's network, as its resolver: the trust anchors its
	# administrator added (a TLS-inspecting proxy's CA; ca-certificates,
	# which deps.sh installs, adds them to the system's bundle) and npm's
	# machine-wide configuration (which names that bundle): without them
	# the npm registry is unreachable in here though it is on the host.
	if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
		mkdir -p "$_root/usr/local/share/ca-certificates"
		cp /usr/local/share/ca-certificates/*.crt "$_root/usr/local/share/ca-certificates/"
	fi
	for _f in /etc/npmrc /usr/etc/npmrc; do
		[ -f "$_f" ] || continue
		mkdir -p "$_root${_f%/*}"
		cp "$_f" "$_root$_f"
	done
	echo force-unsafe-io >"$_root/etc/dpkg/dpkg.cfg.d/usdtkit-unsafe-io"
	if [ -n "$chroot_cache" ]; then
		for f in "$chroot_cache"/apt/*.deb; do
			[ -e "$f" ] || continue
			[ -e "$_root/var/cache/apt/archives/${f##*/}" ] && continue
			ln "$f" "$_root/var/cache/apt/archives/" 2>/dev/null ||
				cp "$f" "$_root/var/cache/apt/archives/"
		done
	fi
}

# --fork --pid: the chroot's processes live in their own PID namespace and
# die with its first process; --kill-child: that one dies with unshare (a
# timeout's SIGTERM). --mount: private mounts, gone with the namespace; the
# root a mount point, as on a machine (unshare(1) in the tests changes its
# propagation, which a plain directory does not have).
chroot_run() { # root cmd [arg]...
	# shellcheck disable=SC2016 # expanded by the inner sh
	_pidns="--pid --fork --kill-child"
	[ -z "${CHROOT_SYS:-}" ] || _pidns=""
	# shellcheck disable=SC2086
	CHROOT_SYS=${CHROOT_SYS:-} unshare --mount $_pidns --propagation private sh -euc '
		root=$1
		shift
		mount --bind "$root" "$root"
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		if [ -n "$CHROOT_SYS" ]; then
			mount --rbind /sys "$root/sys"
			mount --make-rslave "$root/sys"
		fi
		exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
			DEBIAN_FRONTEND=noninteractive \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
	' chroot_run "$@"
}

chroot_keep_debs() { # root
	[ -n "$chroot_cache" ] || return 0
	for f in "$1"/var/cache/apt/archives/*.deb; do
		[ -e "$f" ] || continue
		[ -e "$chroot_cache/apt/${f##*/}" ] && continue
		ln "$f" "$chroot_cache/apt/" 2>/dev/null || cp "$f" "$chroot_cache/apt/" 2>/dev/null || true
	done
}
