#!/bin/sh
# An emulated arm64 Debian 12 machine for the tests that need an arm64 kernel
# (tests/arm64/README.md).
#
# Theory: the arm64 path (the <sys/sdt.h> operands arm64 compilers emit,
# -G objects, drti, the runtime's in-memory ELF objects and fire stub, the
# daemon's tracefs fetches by arm64 register names, ptrace to main) can only
# be shown to work on an arm64 kernel, and the only one reachable here is
# Debian's, run by qemu-system-aarch64 (-M virt -cpu max,sve=off, TCG: no
# KVM, so every guest instruction is translated; expect 20-50 times slower
# than the host). Without SVE: with it, Node died by SIGILL or SIGTRAP in
# V8's JIT code under Debian 12's QEMU 7.2 system emulation (also in
# sequences without the runtime's unload), and the same runs passed with
# sve=off, pointer authentication and BTI still on (tests/arm64/README.md).
# The machine is built from Debian's own arm64 packages, from the same
# mirror the host's apt uses: mmdebstrap lays the root file system, running
# its arm64 maintainer scripts through qemu-user-static (binfmt_misc); the
# guest's userland (compilers, meson, bpftrace, gdb, perf, valgrind, Node)
# is installed before boot, so the guest needs no network and has none.
#
# The machine is a cache, outside any checkout (CI clones afresh each run):
# $USDTKIT_ARM64_CACHE (default /var/cache/usdtkit-arm64)/<key>/ holds
# rootfs.img (ext4), vmlinuz and initrd.img, where <key> hashes the package
# list and the recipe below, so changing either builds a new machine and a
# run never uses a stale one. A boot never writes the image (-snapshot: the
# guest's writes go to a temporary overlay), so every run starts from the
# same machine.
#
# Booting: no firmware, no bootloader, no systemd. QEMU loads Debian's
# kernel and initrd directly; the initrd mounts the image as / and runs
# /usr/local/sbin/usdtkit-guest-init, which mounts a results directory of
# the host (9p, tag "out") at /out and runs its init.sh, written by `run`:
# it mounts tracefs, a tmpfs /tmp and the host's checkout (9p, read-only,
# tag "src") at /src, runs /out/job.sh there, writes its exit status to
# /out/rc, and the machine powers off. Its console (the serial port) is
# this script's stdout. Keeping all but the 9p mount out of the image means
# a change in how the machine is used never costs a rebuild.
#
#   scripts/arm64-vm.sh build          build the cached machine if missing
#   scripts/arm64-vm.sh check          its first step only: tools, binfmt_misc,
#                                      and its packages resolved (simulated)
#   scripts/arm64-vm.sh run JOB [OUT]  boot it, run the shell script JOB
#                                      in it (as /out/job.sh, from /src), exit
#                                      with its status; OUT (default: a
#                                      temporary directory) is /out
#   scripts/arm64-vm.sh path           print the cache directory of this recipe
#   scripts/arm64-vm.sh sysroot        print (made once) the machine's /usr for
#                                      cross builds
#
#   USDTKIT_ARM64_CACHE   cache root (default /var/cache/usdtkit-arm64)
#   USDTKIT_ARM64_MIRROR  Debian mirror (default: the one /etc/apt uses)
#   USDTKIT_ARM64_SMP     guest CPUs (default 2: the host's two are shared)
#   USDTKIT_ARM64_CPU     QEMU's -cpu (default max,sve=off; cortex-a72 is
#                         ARMv8.0: no PAC, BTI, SVE, and about twice as fast)
#   USDTKIT_ARM64_MEM     guest memory in MiB (default 3072)
#   USDTKIT_ARM64_TIMEOUT seconds a run may take before it is killed (3600)
#
# Cost (measured on this project's 2-core CI machine, TCG): see
# tests/arm64/README.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cache_root=${USDTKIT_ARM64_CACHE:-/var/cache/usdtkit-arm64}

# The guest's packages: the build's and the kernel suites' needs (as in
# scripts/deps.sh, less the host-only ones: cross compilers, multilib,
# packaging and style tools, npm), Debian's arm64 kernel and an initramfs
# builder for it.
GUEST_PKGS="linux-image-arm64 initramfs-tools kmod udev
gcc g++ clang lld binutils make meson ninja-build pkg-config python3
libelf-dev libdwarf-dev libseccomp-dev zlib1g-dev libclang-rt-14-dev libbpf-dev
gdb valgrind bpftrace linux-perf systemtap-sdt-dev python3-pyparsing
systemd procps file strace util-linux
nodejs libnode-dev"
# Bumped whenever the recipe below changes in a way the package list does
# not show (hooks, the init script): part of the cache key.
RECIPE=2

mirror() {
	if [ -n "${USDTKIT_ARM64_MIRROR:-}" ]; then
		echo "$USDTKIT_ARM64_MIRROR"
		return
	fi
	# The host's own Debian mirror: its deb822 sources or sources.list.
	m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/*$/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
	[ -n "$m" ] || m=$(sed -n 's/^deb[[:space:]]\+\(http[^[:space:]]*\/debian\)\/*[[:space:]].*/\1/p' \
		/etc/apt/sources.list 2>/dev/null | head -n1)
	echo "${m:-http://deb.debian.org/debian}"
}

key() {
	printf '%s\n%s\n' "$RECIPE" "$GUEST_PKGS" | tr -s ' \n' '\n\n' | sort |
		sha256sum | cut -c1-16
}

cachedir() { echo "$cache_root/$(key)"; }

# The guest's PID 1, baked into the image: only what it takes to reach the
# results share, whose init.sh (guest_stage2, written at every run) does the
# rest. So the image, built once, never has to change for a change of how
# the machine is used. POSIX sh (the guest's dash).
guest_init() {
	cat <<'EOF'
#!/bin/sh
# usdtkit's arm64 test machine: PID 1 (scripts/arm64-vm.sh).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
modprobe 9pnet_virtio
modprobe 9p
mkdir -p /out
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out /out && [ -f /out/init.sh ]; then
	sh /out/init.sh
else
	echo "usdtkit-arm64: no results share or no /out/init.sh"
fi
sync
echo o >/proc/sysrq-trigger
sleep 60
EOF
}

# What PID 1 runs from the results share (/out/init.sh): the mounts the tests
# need, the checkout at /src, then /out/job.sh from /src; its status goes to
# /out/rc. Both shares are also mounted at their host paths (TOP, OUT), so
# that a build directory made on the host (scripts/arm64-test.sh
# cross-builds) finds its absolute paths.
guest_stage2() { # TOP OUT
	echo "TOP='$1' OUT='$2'"
	cat <<'EOF'
export HOME=/root LANG=C.UTF-8
mkdir -p /dev/pts /dev/shm
# What udev would make: bash's process substitution opens /dev/fd/N.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# /run as systemd mounts it, 0755: a tmpfs is 1777 by default, and the daemon's
# aliases (/run/usdtkit/files) refuse a directory others may write to.
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
mount -t tmpfs -o size=1500m tmpfs /tmp
mount -t tracefs nodev /sys/kernel/tracing
mount -t debugfs nodev /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -o remount,rw /
hostname usdtkit-arm64
ip link set lo up 2>/dev/null || true
mkdir -p /src
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 src /src
mkdir -p "$TOP" "$OUT"
mount --bind /src "$TOP"
mount --bind /out "$OUT"
echo "usdtkit-arm64: up after $(cut -d' ' -f1 /proc/uptime) s: $(uname -srm), $(nproc) CPUs"
rc=1
if [ -f /out/job.sh ]; then
	(cd /src && exec sh /out/job.sh)
	rc=$?
fi
echo "$rc" >/out/rc
echo "usdtkit-arm64: job exited $rc after $(cut -d' ' -f1 /proc/uptime) s"
EOF
}

build() {
	dir=$(cachedir)
	if [ -f "$dir/ok" ]; then
		return 0
	fi
	preflight
	start=$(date +%s)
	mkdir -p "$cache_root"
	work="$cache_root/.build-$(key)-$$"
	rm -rf "$work"
	mkdir -p "$work"
	trap 'rm -rf "$work"' EXIT
	init=$(guest_init)
	# No Debian initramfs: update-initramfs is diverted to a no-op before
	# initramfs-tools (which linux-image-arm64 requires) is unpacked, since
	# mkinitramfs under qemu-user takes ten minutes and more (hundreds of
	# emulated shell loops and execs); the machine boots with the initramfs
	# made natively below (initrd()). Documentation is left out (dpkg path-exclude): nothing here reads it,
	# and man-db's trigger under emulation costs minutes.
	echo "arm64-vm: building the arm64 machine into $dir (from $(mirror))" >&2
	# shellcheck disable=SC2086
	nice mmdebstrap --mode=root --arch=arm64 --variant=apt \
		--aptopt='APT::Install-Recommends "false"' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--essential-hook='chroot "$1" dpkg-divert --local --rename --add /usr/sbin/update-initramfs && printf "#!/bin/sh\nexit 0\n" > "$1/usr/sbin/update-initramfs" && chmod 755 "$1/usr/sbin/update-initramfs"' \
		--include="$(echo $GUEST_PKGS | tr ' ' ',')" \
		--customize-hook='echo usdtkit-arm64 > "$1/etc/hostname"' \
		--customize-hook='printf "/dev/vda / ext4 rw 0 1\n" > "$1/etc/fstab"' \
		--customize-hook='rm -f "$1/etc/machine-id"; : > "$1/etc/machine-id"' \
		bookworm "$work/rootfs" \
		"deb $(mirror) bookworm main" \
		"deb $(mirror) bookworm-updates main" \
		"deb $(mirror | sed 's,/debian$,/debian-security,') bookworm-security main" >&2
	printf '%s\n' "$init" > "$work/rootfs/usr/local/sbin/usdtkit-guest-init"
	chmod 755 "$work/rootfs/usr/local/sbin/usdtkit-guest-init"
	cp -L "$work/rootfs/vmlinuz" "$work/vmlinuz"
	initrd "$work/rootfs" "$work/initrd.img"
	# The image: the tree plus 2 GiB free for the builds and the tests'
	# scratch files (the overlay of -snapshot holds the writes).
	used=$(du -sm "$work/rootfs" | cut -f1)
	mke2fs -q -t ext4 -L usdtkit-arm64 -d "$work/rootfs" \
		"$work/rootfs.img" "$((used + 2048))M"
	rm -rf "$work/rootfs"
	{
		echo "built $(date -u +%FT%TZ) in $(($(date +%s) - start)) s"
		echo "packages: $GUEST_PKGS" | tr '\n' ' '
		echo
	} > "$work/ok"
	rm -rf "$dir"
	mv "$work" "$dir"
	trap - EXIT
	echo "arm64-vm: built in $(($(date +%s) - start)) s; $(du -sh "$dir" | cut -f1) in $dir" >&2
}

# initrd ROOTFS OUT: the initramfs, made on the host: a static arm64 /init
# (scripts/arm64/initrd-init.c, cross-compiled) and the modules the root
# disk and the 9p shares need, with their dependencies from modules.dep,
# listed in load order in /modules.order.
initrd() {
	root=$1
	kv=$(ls "$root/lib/modules" | head -n1)
	ird="$work/initrd"
	mkdir -p "$ird/dev" "$ird/proc" "$ird/root"
	aarch64-linux-gnu-gcc -O2 -static -o "$ird/init" "$top/scripts/arm64/initrd-init.c"
	python3 - "$root/lib/modules/$kv" crc32c_generic virtio_pci virtio_blk ext4 \
		9pnet_virtio 9p >"$work/modules" <<'PY'
import os, sys
d = sys.argv[1]
dep = {}
for line in open(os.path.join(d, "modules.dep")):
    k, _, v = line.partition(":")
    dep[k.strip()] = v.split()
byname = {os.path.basename(k)[:-3].replace("-", "_"): k for k in dep}
out = []
def add(k):
    if k not in out:
        for x in dep[k]:
            add(x)
        out.append(k)
for m in sys.argv[2:]:
    add(byname[m])
print("\n".join(out))
PY
	while read -r m; do
		mkdir -p "$ird/lib/modules/$kv/$(dirname "$m")"
		cp "$root/lib/modules/$kv/$m" "$ird/lib/modules/$kv/$m"
		echo "/lib/modules/$kv/$m"
	done <"$work/modules" >"$ird/modules.order"
	(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"
	rm -rf "$ird"
}

# sysroot: the machine's headers and libraries on the host, for cross
# builds (scripts/arm64-test.sh): $dir/sysroot, copied out of the image once
# (debugfs: no mount, no loop device).
sysroot() {
	dir=$(cachedir)
	[ -f "$dir/ok" ] || build
	if [ ! -d "$dir/sysroot/usr/lib" ]; then
		rm -rf "$dir/sysroot.tmp"
		mkdir -p "$dir/sysroot.tmp/usr/share"
		debugfs -R "rdump /usr/include /usr/lib $dir/sysroot.tmp/usr" "$dir/rootfs.img" 2>/dev/null
		debugfs -R "rdump /usr/share/pkgconfig $dir/sysroot.tmp/usr/share" "$dir/rootfs.img" 2>/dev/null
		ln -s usr/lib "$dir/sysroot.tmp/lib"
		[ -e "$dir/sysroot.tmp/usr/lib/aarch64-linux-gnu/crt1.o" ] ||
			{ echo "arm64-vm: no sysroot could be copied out of $dir/rootfs.img" >&2; exit 1; }
		mv "$dir/sysroot.tmp" "$dir/sysroot"
	fi
	echo "$dir/sysroot"
}

# What a build needs of this machine, checked before its half hour starts:
# the tools (scripts/deps.sh installs them; mmdebstrap also needs arch-test
# to run a foreign architecture) and binfmt_misc for qemu-user-static.
preflight() {
	for t in mmdebstrap arch-test qemu-aarch64-static mke2fs aarch64-linux-gnu-gcc cpio; do
		command -v $t >/dev/null ||
			{ echo "arm64-vm: $t missing (scripts/deps.sh installs it)" >&2; exit 1; }
	done
	binfmt
}

# `check`: the build's first real step without its half hour: the
# preflight, then mmdebstrap's own set-up and package resolution for the
# machine's package list from the mirror (--simulate: nothing is unpacked).
# The fresh-machine check runs it, so a tool a fresh machine lacks shows in
# CI, not on a contributor's first `sh scripts/arm64-test.sh`.
check() {
	preflight
	sim=$(mktemp -d /tmp/usdtkit-arm64-check.XXXXXX)
	# shellcheck disable=SC2086
	if ! mmdebstrap --simulate --mode=root --arch=arm64 --variant=apt \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$(echo $GUEST_PKGS | tr ' ' ',')" \
		bookworm "$sim/rootfs" "deb $(mirror) bookworm main" >"$sim/log" 2>&1; then
		tail -20 "$sim/log" >&2
		rm -rf "$sim"
		echo "arm64-vm: mmdebstrap --simulate failed (above)" >&2
		exit 1
	fi
	rm -rf "$sim"
	echo "arm64-vm: check passed: tools, binfmt_misc and the machine's packages resolve" >&2
}

# mmdebstrap runs arm64 maintainer scripts: binfmt_misc must hand arm64
# ELF files to qemu-user-static. In a container binfmt_misc may be
# unmounted and the entry unregistered (no systemd-binfmt ran): do both.
binfmt() {
	[ -e /proc/sys/fs/binfmt_misc/register ] ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
		cat /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register
	fi
	grep -q enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
		{ echo "arm64-vm: binfmt_misc qemu-aarch64 is disabled" >&2; exit 1; }
}

run() {
	job=$1
	out=${2:-}
	dir=$(cachedir)
	[ -f "$dir/ok" ] || build
	if [ -z "$out" ]; then
		out=$(mktemp -d /tmp/usdtkit-arm64.XXXXXX)
	fi
	mkdir -p "$out"
	cp "$job" "$out/job.sh"
	out=$(cd "$out" && pwd)
	guest_stage2 "$top" "$out" >"$out/init.sh"
	rm -f "$out/rc"
	# -snapshot: the image is never written. No -nic: no network.
	timeout "${USDTKIT_ARM64_TIMEOUT:-3600}" qemu-system-aarch64 \
		-M virt -cpu "${USDTKIT_ARM64_CPU:-max,sve=off}" -smp "${USDTKIT_ARM64_SMP:-2}" -m "${USDTKIT_ARM64_MEM:-3072}" \
		-nographic -no-reboot -nodefaults -serial stdio -nic none \
		-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
		-append "root=/dev/vda rw console=ttyAMA0 quiet init=/usr/local/sbin/usdtkit-guest-init panic=-1" \
		-drive "file=$dir/rootfs.img,format=raw,if=virtio,snapshot=on" \
		-virtfs "local,path=$top,mount_tag=src,security_model=none,readonly=on" \
		-virtfs "local,path=$out,mount_tag=out,security_model=none" \
		</dev/null || true
	if [ ! -f "$out/rc" ]; then
		echo "arm64-vm: the machine stopped without a job status (timeout or crash)" >&2
		return 1
	fi
	return "$(cat "$out/rc")"
}

case ${1:-} in
build) build ;;
check) check ;;
run) shift; run "$@" ;;
path) cachedir ;;
sysroot) sysroot ;;
initrd) shift; work=$(mktemp -d); initrd "$@"; rm -rf "$work" ;;
*) echo "usage: $0 build | check | run JOB [OUTDIR] | path | sysroot" >&2; exit 2 ;;
esac
