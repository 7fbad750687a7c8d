#!/bin/sh
# Installs, with apt-get, whatever of usdtkit's build and test dependencies is
# missing. Idempotent and quiet when everything is there.
set -eu

# Installed with --no-install-recommends, so every package the build or a
# test needs is named here, recommended or not; scripts/fresh-check.sh (the
# test fresh/fresh-debian12) proves the list complete on a minimal Debian 12.
# gcc-12-multilib rather than gcc-multilib: Debian's gcc-multilib conflicts
# with the aarch64 cross compiler, which the -G cross-target tests need.
# libc6-dev-arm64-cross: that compiler's libc (its crt files and libc.so),
# only recommended by gcc-aarch64-linux-gnu; without it every aarch64 link
# fails. libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (the
# sanitizer run, the fuzz targets), only recommended by clang.
# libbpf-dev: dtrace -n/-s (its BPF engine) loads its programs with libbpf (and
# compiles them with clang); bpftool: looking at what it loaded.
# python3-pyparsing: SystemTap's dtrace parses .d files with it when it is
# there, and with a weaker fallback, which drops probes, when it is not; the
# tests compare against the former. systemd: systemd-socket-activate;
# procps: ps; file, strace: used by the tests. debootstrap: the fresh check
# and the packaging tests' chroots. dpkg-dev, debhelper, dh-python, lintian,
# rpm, rpmlint, cpio: the packaging suite (packaging/README.md). clang-format: the
# style check (tests/style). autoconf, automake, libtool: the Autotools example
# (tests/install/t-buildsys.sh). qemu-system-arm, qemu-user-static, mmdebstrap,
# e2fsprogs, arch-test (mmdebstrap's test of a foreign architecture, only
# recommended by it): the emulated arm64 machine (scripts/arm64-vm.sh, suite
# arm64).
# git: the style check lists the files git tracks (tests/style), and the
# package builds take the committed tree (git archive). ca-certificates: npm's https (t-node-upstream packs dtrace-provider from
# the npm registry), only recommended by npm. python3.11 and
# libpython3.11-testsuite: CPython's own DTrace test run with our dtrace
# (tests/clients); gawk: the .r.p filters of DTrace's unit tests
# (tests/conformance).
PKGS="gcc clang lld binutils make meson ninja-build pkg-config python3 git
libelf-dev libdwarf-dev libseccomp-dev zlib1g-dev libclang-rt-14-dev libbpf-dev bpftool
gdb valgrind bpftrace linux-perf systemtap-sdt-dev python3-pyparsing
gcc-12-multilib gcc-aarch64-linux-gnu libc6-dev-arm64-cross g++ cmake
man-db groff-base mandoc systemd procps file strace debootstrap
dpkg-dev debhelper dh-python lintian rpm rpmlint cpio clang-format
autoconf automake libtool qemu-system-arm qemu-user-static mmdebstrap e2fsprogs arch-test
ca-certificates python3.11 libpython3.11-testsuite gawk"

# Node.js for bindings/node: Node's headers (node_api.h) for the addon, npm
# and node-gyp for the package's own build (tests/runtime-node). A nodejs
# that is not Debian's is used as it is: NodeSource's package ships the
# headers, npm and npm's node-gyp itself, and conflicts with Debian's
# libnode-dev.
if ! dpkg-query -W -f='${Version}' nodejs 2>/dev/null | grep -q nodesource; then
	PKGS="$PKGS nodejs libnode-dev npm node-gyp"
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if [ -n "$missing" ]; then
	echo "usdtkit: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	# All at once: dpkg's triggers (man-db's index, ldconfig) run once, not
	# once a package, which takes minutes off a fresh machine's install.
	# shellcheck disable=SC2086
	if ! $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
		# Then one at a time: a package the archive cannot satisfy is named,
		# not hidden behind apt's "held broken packages".
		for p in $missing; do
			$SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null ||
				{ echo "usdtkit: apt-get install $p failed" >&2; exit 1; }
		done
	fi
fi

# The one file gcc-multilib would have added: /usr/include/asm, the kernel's
# asm headers for -m32 (x86_64-linux-gnu/asm serves both ABIs). Without it a
# -m32 compiler cannot include <errno.h> or <sys/socket.h>, and the -m32
# tests build probed programs whose -G objects (drti) need both. dpkg takes
# the link over should gcc-multilib be installed later.
if [ ! -e /usr/include/asm ] && [ ! -L /usr/include/asm ] &&
	[ -d /usr/include/x86_64-linux-gnu/asm ]; then
	$SUDO ln -s x86_64-linux-gnu/asm /usr/include/asm
fi
