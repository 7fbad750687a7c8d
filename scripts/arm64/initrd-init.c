// SPDX-License-Identifier: MIT
/*
 * The emulated arm64 machine's initramfs /init (scripts/arm64-vm.sh): a
 * static arm64 program, cross-compiled on the host, so that the initramfs
 * is made natively in a second instead of by Debian's mkinitramfs run under
 * qemu-user (which takes ten minutes and more: hundreds of shell loops and
 * execs, each emulated).
 *
 * It loads the modules the root disk needs, in the order given in
 * /modules.order (dependencies first: the host wrote it from modules.dep),
 * mounts /dev/vda (ext4) read-write on /root, moves /dev there and
 * switches root to it, then executes the image's own init,
 * /usr/local/sbin/usdtkit-guest-init. Anything failing is printed on the
 * console and the machine is powered off: there is nobody to talk to.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "initrd: %s: %s\n", what, strerror(errno));
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

int main(void)
{
	char path[512];
	FILE *order;
	int i;

	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("proc", "/proc", "proc", 0, NULL);
	order = fopen("/modules.order", "r");
	if (!order)
		die("/modules.order");
	while (fgets(path, sizeof(path), order)) {
		int fd;

		path[strcspn(path, "\n")] = '\0';
		if (!path[0])
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die(path);
		if (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST)
			die(path);
		close(fd);
	}
	fclose(order);
	/* The disk appears once virtio's probe has run: wait up to 30 s. */
	for (i = 0; i < 300 && access("/dev/vda", F_OK) != 0; i++)
		usleep(100000);
	if (mount("/dev/vda", "/root", "ext4", 0, NULL) != 0)
		die("mount /dev/vda");
	if (mount("/dev", "/root/dev", NULL, MS_MOVE, NULL) != 0)
		die("move /dev");
	umount("/proc");
	if (chdir("/root") != 0 || mount(".", "/", NULL, MS_MOVE, NULL) != 0 || chroot(".") != 0 ||
	    chdir("/") != 0)
		die("switch root");
	execl("/usr/local/sbin/usdtkit-guest-init", "usdtkit-guest-init", (char *)NULL);
	die("exec /usr/local/sbin/usdtkit-guest-init");
	return 1;
}
