#!/bin/sh
# The proof a distribution asks for: a real Debian source package that
# Build-Depends on systemtap-sdt-dev, rebuilt with usdtkit standing in for
# it, and its probes traced.
#
#   sh packaging/debian/test-rebuild.sh [SOURCE]     (default: postgresql-15)
#
# SOURCE: a package whose build runs dtrace -h and -G (postgresql-15,
# python3.11, php8.2, ruby3.1, libvirt, openjdk-17); the packages that only
# include <sys/sdt.h> (gcc-12, bpftrace) have no usdtkit metadata note to
# find, and fail here.
#
# In a throwaway Debian 12 chroot (debootstrap --variant=minbase from
# Debian's archive; scripts/lib/chroot.sh): installs usdtkit's packages
# (built from HEAD by build.sh, or taken from USDTKIT_DEBS=DIR), checks that
# they took systemtap-sdt-dev's place, lets `apt-get build-dep SOURCE`
# satisfy its systemtap-sdt-dev dependency with them (apt must not pull the
# real one), rebuilds SOURCE with `dpkg-buildpackage -B` (nocheck nodoc),
# then checks the binaries: stapsdt notes, and usdtkit's metadata note, which
# only usdtkit's dtrace -G writes. For postgresql-15 it also installs the
# built packages in the chroot and traces postgresql:transaction__start with
# bpftrace (run on the host, on the chroot's file) while initdb runs there.
# The chroot and everything in it are removed at the end; the host's
# packages and apt state are not touched.
#
# Root (debootstrap, chroot, mounts). postgresql-15 took about 20 minutes
# here (2 cores): build-deps 1, build 17. USDTKIT_KEEP_CHROOT=1 leaves the
# chroot (its path is printed) for a look afterwards.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-postgresql-15}
[ "$(id -u)" -eq 0 ] || { echo "test-rebuild: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
for c in debootstrap unshare chroot flock readelf bpftrace; do
	command -v "$c" >/dev/null || { echo "test-rebuild: $c is not installed" >&2; exit 1; }
done
. "$top/scripts/lib/chroot.sh"
scratch=$(mktemp -d /var/tmp/usdtkit-rebuild.XXXXXX)
root=$scratch/root
cleanup() {
	set +e
	[ -n "${bt_pid:-}" ] && kill "$bt_pid" 2>/dev/null
	if [ "${USDTKIT_KEEP_CHROOT:-0}" = 1 ]; then
		echo "test-rebuild: chroot kept in $root"
	else
		rm -rf --one-file-system "$scratch"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start=$(date +%s)
step() { echo "test-rebuild: [$(($(date +%s) - start)) s] $*"; }
fail() { echo "test-rebuild: FAIL: $*" >&2; exit 1; }

debs=${USDTKIT_DEBS:-}
if [ -z "$debs" ]; then
	step "building usdtkit's packages (packaging/debian/build.sh)"
	debs=$scratch/debs
	DEB_BUILD_OPTIONS=nocheck sh "$top/packaging/debian/build.sh" "$debs" >"$scratch/build.log" 2>&1 ||
		{ cat "$scratch/build.log" >&2; fail "build.sh"; }
fi
set -- "$debs"/usdtkit-dtrace_*.deb "$debs"/usdtkit-sdt-dev_*.deb
[ -f "$1" ] && [ -f "$2" ] || fail "no usdtkit-dtrace/usdtkit-sdt-dev .deb in $debs"

step "debootstrap bookworm (minbase) from $chroot_mirror"
chroot_create "$root" || fail "debootstrap"
mkdir "$root/usdtkit-debs" "$root/out"
cp "$debs"/usdtkit-dtrace_*.deb "$debs"/usdtkit-sdt-dev_*.deb "$root/usdtkit-debs/"

# A script run in the chroot (scripts/lib/chroot.sh), traced (sh -x) into
# the log the caller names.
in_chroot() { chroot_run "$root" sh -euxc "$1"; }

step "installing usdtkit-dtrace and usdtkit-sdt-dev in the chroot"
in_chroot '
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends /usdtkit-debs/*.deb >/out/install.log
	dpkg-query -W -f="\${Provides}\n" usdtkit-dtrace | grep -q "systemtap-sdt-dev (= "
	! dpkg-query -W -f="\${Status}" systemtap-sdt-dev 2>/dev/null | grep -q "ok installed"
	apt-get -s build-dep '"$src"' >/out/build-dep-sim.log
	! grep -q "^Inst systemtap-sdt-dev" /out/build-dep-sim.log
' >"$scratch/install.log" 2>&1 || { tail -30 "$scratch/install.log" >&2; fail "installing usdtkit or simulating build-dep $src"; }

step "apt-get build-dep $src (systemtap-sdt-dev satisfied by usdtkit-dtrace)"
in_chroot '
	apt-get build-dep -y -qq --no-install-recommends '"$src"' >/out/build-dep.log
	dpkg-query -W -f="\${Status}" usdtkit-dtrace | grep -q "ok installed"
	! dpkg-query -W -f="\${Status}" systemtap-sdt-dev 2>/dev/null | grep -q "ok installed"
	test "$(command -v dtrace)" = /usr/bin/dtrace
	dtrace -V
	mkdir -p /build && cd /build && apt-get source -qq '"$src"' >/out/source.log
' >"$scratch/deps.log" 2>&1 || { tail -30 "$scratch/deps.log" >&2; fail "build-dep/source $src"; }
grep -q "^dtrace: usdtkit " "$scratch/deps.log" || fail "dtrace -V in the chroot is not usdtkit's"

step "dpkg-buildpackage -us -uc -B of $src (nocheck nodoc)"
in_chroot '
	cd /build/'"$src"'-*/
	DEB_BUILD_OPTIONS="nocheck nodoc parallel=$(nproc)" dpkg-buildpackage -us -uc -B >/out/build.log 2>&1
' >"$scratch/rebuild.log" 2>&1 || { tail -40 "$root/out/build.log" >&2; fail "rebuild of $src"; }
grep -E "(^|[ /])dtrace .*-(h|G)( |$)" "$root/out/build.log" >"$scratch/dtrace-runs" ||
	fail "the build log shows no dtrace -h/-G"
grep -q -- " -h " "$scratch/dtrace-runs" && grep -q -- " -G " "$scratch/dtrace-runs" ||
	fail "the build log shows dtrace -h or -G, not both"
cut -c1-160 "$scratch/dtrace-runs"

step "checking the probes of what was built"
found=0
mkdir "$scratch/x"
for d in "$root"/build/*.deb; do
	case $d in *-dbgsym_*) continue ;; esac
	dpkg-deb -x "$d" "$scratch/x"
done
for f in $(find "$scratch/x" -type f -perm -u+x); do
	readelf -h "$f" >/dev/null 2>&1 || continue
	n=$(readelf -n "$f" 2>/dev/null | grep -c "stapsdt" || true)
	[ "$n" -gt 0 ] || continue
	readelf -S "$f" | grep -q "\.note\.usdtkit" || fail "$f has $n stapsdt notes but no .note.usdtkit: not made by usdtkit's dtrace -G"
	echo "  ${f#"$scratch"/x}: $n probes, usdtkit metadata note"
	found=$((found + 1))
done
[ "$found" -gt 0 ] || fail "no binary of $src has stapsdt notes"

if [ "$src" = postgresql-15 ]; then
	step "installing the built PostgreSQL in the chroot; tracing transaction__start during initdb"
	bin=/usr/lib/postgresql/15/bin/postgres
	in_chroot '
		mkdir -p /etc/postgresql-common
		echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
		cd /build
		apt-get install -y -qq --no-install-recommends ./libpq5_*.deb ./postgresql-client-15_*.deb \
			./postgresql-15_*.deb >/out/pg-install.log
	' >"$scratch/pg-install.log" 2>&1 || { tail -30 "$scratch/pg-install.log" >&2; fail "installing the built postgresql-15"; }
	bpftrace -e "usdt:$root$bin:postgresql:transaction__start { @transaction_start = count(); }" \
		>"$scratch/bt.out" 2>"$scratch/bt.err" &
	bt_pid=$!
	for _ in $(seq 100); do
		grep -q "^Attaching" "$scratch/bt.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q "^Attaching" "$scratch/bt.out" || { cat "$scratch/bt.err" >&2; fail "bpftrace did not attach"; }
	in_chroot '
		mkdir -p /tmp/pgdata && chown postgres /tmp/pgdata
		su postgres -s /bin/sh -c "/usr/lib/postgresql/15/bin/initdb -D /tmp/pgdata" >/out/initdb.log
	' >"$scratch/initdb.log" 2>&1 || { tail -20 "$scratch/initdb.log" >&2; fail "initdb"; }
	kill -INT "$bt_pid"
	wait "$bt_pid" || true
	bt_pid=""
	cat "$scratch/bt.out"
	n=$(sed -n 's/^@transaction_start: \([0-9]*\)$/\1/p' "$scratch/bt.out")
	[ "${n:-0}" -gt 0 ] || fail "postgresql:transaction__start did not fire during initdb"
fi
step "done: $src rebuilt with usdtkit for systemtap-sdt-dev; $found binaries with usdtkit probes"
