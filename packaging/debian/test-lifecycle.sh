#!/bin/sh
# Install, upgrade and purge of usdtkit's Debian packages under a real
# systemd, with a probed program running throughout.
#
#   sh packaging/debian/test-lifecycle.sh
#
# A throwaway Debian 12 chroot (scripts/lib/chroot.sh) with systemd,
# booted as PID 1 of its own PID, mount and cgroup namespaces (the kernel,
# its uprobes and tracefs are the host's: the events the chroot's daemon
# makes are real). In it, through the package scripts alone:
#   1. install (version V1, built from HEAD by build.sh): the socket is
#      enabled and listening, the daemon not started;
#   2. a program compiled there with the installed dtrace -h/-G starts: the
#      socket starts the daemon, the program's events sdt_usdtkitpkg/* exist;
#      then the runtime providers, one program each built there against the
#      installed libraries with pkg-config (usdtkit-runtime, libstapsdt) and
#      a python3 script importing the installed usdtkit module: each loads
#      a provider, whose event appears and `dtrace -l -p` lists, and
#      unloads it, whose event goes;
#   3. upgrade to V2 (the same tree as V1+lifecycle1): the daemon is a new
#      process, and the running program's events are there again, listed by
#      `dtrace -l -p` (the new daemon adopted them at start);
#   4. purge (with what it pulled in), the program still running: no usdtkit
#      process is left, none of its events, no /run/usdtkit, and the
#      chroot's files are those before the install (apt's and dpkg's own
#      state aside; python3-usdtkit's bytecode gone too); the program ran on
#      unharmed.
# Root. About 3 minutes (debootstrap 40 s, two package builds: one when
# deb-check has left this commit's, USDTKIT_DEB_SHARE).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "test-lifecycle: needs root (debootstrap, namespaces, tracefs)" >&2; exit 1; }
for c in debootstrap unshare nsenter chroot flock; do
	command -v "$c" >/dev/null || { echo "test-lifecycle: $c is not installed" >&2; exit 1; }
done
tracefs=/sys/kernel/tracing
[ -w $tracefs/uprobe_events ] || mount -t tracefs nodev $tracefs 2>/dev/null || true
[ -w $tracefs/uprobe_events ] || { echo "test-lifecycle: tracefs is not usable at $tracefs" >&2; exit 1; }
. "$top/scripts/lib/chroot.sh"
scratch=$(mktemp -d /var/tmp/usdtkit-lifecycle.XXXXXX)
root=$scratch/root
init=""
cleanup() {
	set +e
	# The namespace's init takes every process of the chroot with it.
	[ -n "$init" ] && kill -KILL "$init" 2>/dev/null
	[ -n "${ns_pid:-}" ] && wait "$ns_pid" 2>/dev/null
	# Events a killed daemon left: only ours, one by one (never a truncation).
	grep -o '^[pr]:sdt_usdtkitpkg[a-z]*/[^ ]*' $tracefs/uprobe_events 2>/dev/null | sed 's/^.:/-:/' |
		while read -r e; do echo "$e" >>$tracefs/uprobe_events 2>/dev/null || true; done
	rm -rf --one-file-system "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start=$(date +%s)
step() { echo "test-lifecycle: [$(($(date +%s) - start)) s] $*"; }
fail() {
	echo "test-lifecycle: FAIL: $*" >&2
	if [ -n "$init" ]; then
		in_sys 'systemctl status --no-pager usdtkit-helperd.socket usdtkit-helperd.service;
			journalctl --no-pager -n 30 -u usdtkit-helperd.service' >&2 2>&1 || true
	fi
	exit 1
}

v1=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
v2=$v1+lifecycle1
# USDTKIT_LIFECYCLE_DEBS=DIR: packages built before, in DIR/v1 and DIR/v2.
# USDTKIT_DEB_SHARE=DIR: version 1 as packaging/debian/check.sh built it from
# this commit (DIR/COMMIT/v1), when it did; version 2 is built here.
debs=${USDTKIT_LIFECYCLE_DEBS:-}
if [ -z "$debs" ]; then
	debs=$scratch
	. "$top/scripts/lib/head.sh"
	commit=$(head_commit test-lifecycle.sh "$top" 2>/dev/null) || commit=""
	shared=""
	[ -z "${USDTKIT_DEB_SHARE:-}" ] || [ -z "$commit" ] || shared=$USDTKIT_DEB_SHARE/$commit/v1
	if [ -n "$shared" ] && ls "$shared"/usdtkit-dtrace_"$v1"_*.deb >/dev/null 2>&1; then
		step "the packages of $v1 from the deb-check of this commit; building $v2"
		cp -r "$shared" "$scratch/v1"
	else
		step "building the packages, $v1 and $v2"
		DEB_BUILD_OPTIONS=nocheck sh "$top/packaging/debian/build.sh" "$scratch/v1" >"$scratch/b1.log" 2>&1 ||
			{ cat "$scratch/b1.log" >&2; fail "build.sh ($v1)"; }
	fi
	DEB_BUILD_OPTIONS=nocheck USDTKIT_DEB_VERSION=$v2 sh "$top/packaging/debian/build.sh" "$scratch/v2" \
		>"$scratch/b2.log" 2>&1 || { cat "$scratch/b2.log" >&2; fail "build.sh ($v2)"; }
fi

step "debootstrap bookworm (minbase, systemd) from $chroot_mirror"
# (python3 and pkgconf before the install: what python3-usdtkit and the
# -dev packages are used with, not what they bring)
chroot_create "$root" systemd,systemd-sysv,dbus,procps,gcc,libc6-dev,pkgconf,python3 || fail "debootstrap"
chroot_keep_debs "$root"
mkdir "$root/debs"
cp -r "$debs/v1" "$debs/v2" "$root/debs/"
cat >"$root/root/lc.d" <<'D'
provider usdtkitpkg {
	probe tick(int);
};
D
cat >"$root/root/lc.c" <<'C'
#include <stdio.h>
#include <unistd.h>
#include "lc.h"
/* Ticks until /tmp/lc.stop exists; writes each tick to /tmp/lc.ticks. */
int main(void)
{
	int n = 0;
	while (access("/tmp/lc.stop", F_OK) != 0) {
		USDTKITPKG_TICK(n);
		FILE *f = fopen("/tmp/lc.ticks", "w");
		if (f) { fprintf(f, "%d\n", ++n); fclose(f); }
		usleep(20000);
	}
	return 0;
}
C

# The runtime providers: each loads provider usdtkitpkgNAME with probe hit,
# says so in /tmp/NAME.loaded, unloads it when /tmp/NAME.stop appears.
cat >"$root/root/rtc.c" <<'C'
#include <stdio.h>
#include <unistd.h>
#include <usdtkit/runtime.h>
int main(void)
{
	usdtkit_provider *p = usdtkit_provider_create("usdtkitpkgc", NULL);
	usdtkit_probe *hit = p ? usdtkit_probe_add(p, "hit", 1, USDTKIT_INT32) : NULL;
	if (!hit || usdtkit_provider_load(p) != 0)
		return 1;
	fclose(fopen("/tmp/rtc.loaded", "w"));
	for (int i = 0; access("/tmp/rtc.stop", F_OK) != 0 && i < 3000; i++)
		usleep(10000);
	usdtkit_provider_unload(p);
	usdtkit_provider_destroy(p);
	return 0;
}
C
cat >"$root/root/rtst.c" <<'C'
#include <stdio.h>
#include <unistd.h>
#include <libstapsdt.h>
int main(void)
{
	SDTProvider_t *p = providerInit("usdtkitpkgst");
	if (!p || !providerAddProbe(p, "hit", 1, int32) || providerLoad(p) != 0)
		return 1;
	fclose(fopen("/tmp/rtst.loaded", "w"));
	for (int i = 0; access("/tmp/rtst.stop", F_OK) != 0 && i < 3000; i++)
		usleep(10000);
	providerUnload(p);
	providerDestroy(p);
	return 0;
}
C
cat >"$root/root/rtpy.py" <<'P'
import os, time
import usdtkit
p = usdtkit.Provider("usdtkitpkgpy")
p.add_probe("hit", "int")
p.load()
open("/tmp/rtpy.loaded", "w").close()
for _ in range(3000):
    if os.path.exists("/tmp/rtpy.stop"):
        break
    time.sleep(0.01)
p.unload()
p.destroy()
P

# Boot: systemd as PID 1 of new PID, mount and cgroup namespaces, the chroot
# its root; /run and /tmp its own; the host's tracefs.
cat >"$scratch/boot.sh" <<'B'
root=$1
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount -t cgroup2 cgroup2 "$root/sys/fs/cgroup"
mount -t tracefs nodev "$root/sys/kernel/tracing"
mount -t tmpfs tmpfs "$root/run"
mount -t tmpfs tmpfs "$root/tmp"
mount --rbind /dev "$root/dev"
exec chroot "$root" /usr/bin/env -i container=usdtkit-test /lib/systemd/systemd --system \
	--log-target=console
B
step "booting systemd in the chroot"
unshare --mount --pid --fork --cgroup --propagation private sh "$scratch/boot.sh" "$root" \
	>"$scratch/boot.log" 2>&1 &
ns_pid=$!
for _ in $(seq 100); do
	init=$(pgrep -P "$ns_pid" | head -1) && [ -n "$init" ] && break
	sleep 0.1
done
[ -n "$init" ] || fail "systemd did not start"
# Runs a script in the booted chroot.
in_sys() {
	nsenter -t "$init" -a -r -w /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		SYSTEMD_PAGER= PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin sh -euc "$1"
}
state=""
for _ in $(seq 300); do
	state=$(in_sys 'systemctl is-system-running' 2>/dev/null) || true
	case $state in running | degraded) break ;; esac
	sleep 0.1
done
case $state in running | degraded) ;; *) tail -20 "$scratch/boot.log" >&2; fail "systemd in the chroot: $state" ;; esac

# What the chroot holds, apt's and dpkg's records and logs aside.
files() {
	in_sys 'find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
		-o -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/cache -o -path /var/log \
		-o -path /debs -o -path /root \) -prune -o -print | sort'
}
files >"$scratch/files.before"

# Every package but the dbgsym ones.
packages=$(cd "$debs/v1" && ls ./*.deb | sed -n 's|^\./\([^_]*\)_.*|\1|p' | grep -v -- '-dbgsym$' | sort)
[ "$(echo $packages)" = "libstapsdt-dev libstapsdt0 libusdtkit-runtime-dev libusdtkit-runtime0 python3-usdtkit \
usdtkit-dtrace usdtkit-helperd usdtkit-sdt-dev" ] || fail "other packages than expected: $(echo $packages)"
debs_of() { for p in $packages; do printf ' /debs/%s/%s_*.deb' "$1" "$p"; done; }

step "1. install $v1"
in_sys "apt-get install -y -qq --no-install-recommends $(debs_of v1) >/dev/null" >"$scratch/i1.log" 2>&1 ||
	{ cat "$scratch/i1.log" >&2; fail "install $v1"; }
[ "$(in_sys 'systemctl is-enabled usdtkit-helperd.socket')" = enabled ] || fail "the socket is not enabled"
[ "$(in_sys 'systemctl is-active usdtkit-helperd.socket')" = active ] || fail "the socket is not listening"
[ "$(in_sys 'systemctl is-active usdtkit-helperd.service' || true)" = inactive ] ||
	fail "the daemon runs before anything connected"

step "2. a probed program built with the installed dtrace"
in_sys 'cd /root && dtrace -h -s lc.d -o lc.h && gcc -c lc.c && dtrace -G -s lc.d -o lcp.o lc.o &&
	gcc -o /root/lc lc.o lcp.o' >"$scratch/cc.log" 2>&1 || { cat "$scratch/cc.log" >&2; fail "building the program"; }
in_sys 'setsid /root/lc </dev/null >/dev/null 2>&1 &'
events() { grep -c '^p:sdt_usdtkitpkg/tick ' $tracefs/uprobe_events || true; }
for _ in $(seq 100); do [ "$(events)" -ge 1 ] && break; sleep 0.05; done
[ "$(events)" -ge 1 ] || fail "no event sdt_usdtkitpkg/tick after the program started"
lc=$(in_sys 'pgrep -x lc')
pid1=$(in_sys 'systemctl show -P MainPID usdtkit-helperd.service')
[ "$pid1" -gt 0 ] || fail "the socket did not start the daemon"
in_sys "dtrace -l -p $lc" | grep -q 'usdtkitpkg.*tick' || fail "dtrace -l -p does not list the program"

step "2b. runtime providers: C (usdtkit-runtime.pc), libstapsdt (libstapsdt.pc), python3"
in_sys 'cd /root && gcc -Wall -Werror -o rtc rtc.c $(pkg-config --cflags --libs usdtkit-runtime) &&
	gcc -Wall -Werror -o rtst rtst.c $(pkg-config --cflags --libs libstapsdt)' >"$scratch/rt.log" 2>&1 ||
	{ cat "$scratch/rt.log" >&2; fail "building against the installed runtime libraries"; }
# (/lib is /usr/lib in Debian 12: ld.so may name either)
in_sys 'ldd /root/rtc /root/rtst' >"$scratch/ldd"
[ "$(grep -c '=> \(/usr\)\{0,1\}/lib/[^ ]*/lib\(usdtkit-runtime\|stapsdt\)\.so\.0 ' "$scratch/ldd")" -eq 3 ] ||
	{ cat "$scratch/ldd" >&2; fail "the programs do not load the installed libraries"; }
rt_event() { grep -c "^p:sdt_usdtkitpkg$1/hit " $tracefs/uprobe_events || true; }
for rt in c st py; do
	case $rt in py) cmd='python3 /root/rtpy.py' ;; *) cmd=/root/rt$rt ;; esac
	in_sys "setsid $cmd </dev/null >/tmp/rt$rt.out 2>&1 &"
	for _ in $(seq 200); do in_sys "[ -e /tmp/rt$rt.loaded ]" 2>/dev/null && break; sleep 0.05; done
	in_sys "[ -e /tmp/rt$rt.loaded ]" || { in_sys "cat /tmp/rt$rt.out" >&2; fail "rt$rt did not load its provider"; }
	for _ in $(seq 100); do [ "$(rt_event $rt)" -eq 1 ] && break; sleep 0.05; done
	[ "$(rt_event $rt)" -eq 1 ] || fail "no event sdt_usdtkitpkg$rt/hit after rt$rt loaded its provider"
	pid=$(in_sys "pgrep -f '^$cmd\$'")
	# ID, provider and PID, module (the memfd's name), function, name
	listed=$(in_sys "dtrace -l -p $pid" | grep -E "^ *[0-9]+ +usdtkitpkg$rt$pid +memfd:usdtkit:usdtkitpkg$rt +hit +hit *\$") ||
		{ in_sys "dtrace -l -p $pid" >&2; fail "dtrace -l -p does not list rt$rt's probe"; }
	echo "test-lifecycle:   rt$rt: event sdt_usdtkitpkg$rt/hit; dtrace -l -p $pid: $listed" | tr -s ' \t' ' '
	in_sys "touch /tmp/rt$rt.stop"
	for _ in $(seq 100); do [ "$(rt_event $rt)" -eq 0 ] && break; sleep 0.05; done
	[ "$(rt_event $rt)" -eq 0 ] || fail "the event of rt$rt is left after it unloaded its provider"
	for _ in $(seq 100); do in_sys "pgrep -f '^$cmd\$'" >/dev/null || break; sleep 0.05; done
done
in_sys 'rm -f /root/rtc /root/rtst'

step "3. upgrade to $v2"
in_sys "apt-get install -y -qq --no-install-recommends $(debs_of v2) >/dev/null" >"$scratch/i2.log" 2>&1 ||
	{ cat "$scratch/i2.log" >&2; fail "upgrade to $v2"; }
for p in $packages; do
	[ "$(in_sys "dpkg-query -W -f='\${Version}' $p")" = "$v2" ] || fail "$p not upgraded"
done
pid2=""
for _ in $(seq 100); do
	pid2=$(in_sys 'systemctl show -P MainPID usdtkit-helperd.service')
	[ "$pid2" -gt 0 ] && [ "$pid2" != "$pid1" ] && break
	sleep 0.05
done
[ "$pid2" -gt 0 ] && [ "$pid2" != "$pid1" ] || fail "the daemon was not restarted (MainPID $pid1, then $pid2)"
[ "$(events)" -ge 1 ] || fail "the running program's events are gone after the upgrade"
in_sys "dtrace -l -p $lc" | grep -q 'usdtkitpkg.*tick' ||
	fail "the new daemon does not list the running program (dtrace -l -p $lc)"
ticks1=$(in_sys 'cat /tmp/lc.ticks')

step "4. purge, the program still running"
in_sys "apt-get purge -y -qq --autoremove $(echo $packages) >/dev/null" >"$scratch/p.log" 2>&1 ||
	{ cat "$scratch/p.log" >&2; fail "purge"; }
[ -z "$(in_sys 'pgrep usdtkit' || true)" ] || fail "a usdtkit process is left after the purge"
[ "$(events)" -eq 0 ] || fail "the events are left after the purge"
in_sys '[ ! -e /run/usdtkit ]' || fail "/run/usdtkit is left after the purge"
sleep 0.2
ticks2=$(in_sys 'cat /tmp/lc.ticks')
[ "$ticks2" -gt "$ticks1" ] || fail "the program stopped ticking ($ticks1, then $ticks2)"
in_sys 'touch /tmp/lc.stop'
files >"$scratch/files.after"
diff "$scratch/files.before" "$scratch/files.after" >"$scratch/files.diff" ||
	{ cat "$scratch/files.diff" >&2; fail "files left or lost after the purge (diff above)"; }
step "done: install, upgrade ($v1 -> $v2, daemon $pid1 -> $pid2, events kept) and purge are clean"
