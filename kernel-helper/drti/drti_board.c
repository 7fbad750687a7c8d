/* SPDX-License-Identifier: MIT */
/*
 * drti's reading of the daemon's board (core/protocol.h, "The board"):
 * whether the file mapped at our note's address is registered already, so
 * that a known file's start sends nothing, and whether the board's daemon
 * is alive.
 *
 * Not a translation unit of its own: drti.c #includes it at one place,
 * after the definitions it uses, so that embed.py pastes drti as one
 * source (`dtrace -G` compiles that with the user's compiler, which has
 * no include path to ours) and every name stays static. The rules of
 * drti.c's opening comment hold here too (C89, no malloc, no stdio).
 */

/*
 * PROCMAP_QUERY (Linux 6.11): what /proc/self/maps says of the mapping
 * holding one address, as one ioctl. Declared here because the user's
 * <linux/fs.h> may predate it; the layout is the kernel's ABI (104 bytes,
 * all fields fixed-width, the same for -m32).
 */
struct usdt_drti_pmq {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define USDT_DRTI_PROCMAP_QUERY 0xc0686611u /* _IOWR('f', 17, struct usdt_drti_pmq) */
#define USDT_DRTI_PMQ_FILE_BACKED 0x20u

/*
 * Whether the daemon's board says this module's file is registered already
 * (core/protocol.h, "The board"): its events exist, so there is
 * nothing to ask. The file is the one the kernel maps at our note's address
 * (PROCMAP_QUERY gives its device, inode and path exactly as the daemon
 * reads them from maps); the board is read with pread only, and only if it
 * is root's and writable by no one else. Any doubt (an older kernel, a
 * deleted file, a long path, a torn slot) answers 0: ask, as before.
 * Returns 1 (known: nothing to ask), 0 (ask), or -1: the board has no
 * daemon, its liveness lock is gone, so the socket beside it is a crashed
 * daemon's and would refuse the connection: nothing to ask either.
 *
 * The liveness lock is looked at on a miss only (issue 33, item 7): a hit
 * needs no live daemon, so the common start, a known file beside a live
 * daemon, spends no fcntl on it. A hit on a crashed daemon's board is as
 * true as on a live one's: a SIGKILL leaves the file's events in place (the
 * next daemon adopts them, or removes them once nobody maps the file, and
 * its start-up scan finds this process, which mapped the file before it
 * read the board), and either way nothing is sent. So a stale board costs
 * a start a few system calls, never a connect or a wait: on a hit the
 * maps query, on a miss the maps query and the fcntl.
 */
static int usdt_drti_known(void)
{
	struct flock lk;
	struct usdt_drti_pmq q;
	struct usdt_board_hdr h;
	struct usdt_board_slot s[USDT_BOARD_WINDOW];
	struct stat st;
	char name[512];
	uint64_t dev, hash, off;
	unsigned i;
	long r;
	int fd, bfd;

	/*
	 * The board first: where there is none (a daemon run with --no-board,
	 * a socket left without its daemon) the cheap failing open() spares
	 * the maps query, the dearer half.
	 */
	bfd = open(usdt_drti_board, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (bfd < 0)
		return 0;
	/*
	 * Only a version-2 board is read, and only it has the liveness lock
	 * (an older daemon's never does: then ask).
	 */
	r = 0;
	if (pread(bfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != USDT_BOARD_MAGIC ||
	    h.version != USDT_BOARD_VERSION)
		goto out;
	if (fstat(bfd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0 || h.hdr_size != sizeof(h) || h.slot_size != sizeof(s[0]) ||
	    h.nslots == 0 || h.nslots > USDT_BOARD_SLOTS_MAX)
		goto miss;
	/*
	 * The name buffer too, not only the query: the kernel fills it, but
	 * checkers that do not know this ioctl (valgrind 3.19, MemorySanitizer
	 * decoding it from its number) see only the 104-byte query written and
	 * would report the name's bytes as uninitialised when we hash them, in
	 * the user's program, at every start where a socket file exists.
	 */
	for (i = 0; i < sizeof(q); i++)
		((unsigned char *)&q)[i] = 0;
	for (i = 0; i < sizeof(name); i++)
		name[i] = 0;
	q.size = sizeof(q);
	q.query_flags = USDT_DRTI_PMQ_FILE_BACKED;
	q.query_addr = (uint64_t)(unsigned long)USDT_DRTI_NOTE;
	q.vma_name_size = sizeof(name);
	q.vma_name_addr = (uint64_t)(unsigned long)name;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto miss;
	r = ioctl(fd, USDT_DRTI_PROCMAP_QUERY, &q);
	close(fd);
	if (r != 0 || q.inode == 0 || q.vma_name_size == 0 || q.vma_name_size > sizeof(name))
		goto miss;
	name[q.vma_name_size - 1] = '\0';
	dev = ((uint64_t)q.dev_major << 32) | q.dev_minor;
	hash = usdt_board_path_hash(name);
	off = sizeof(h) + (uint64_t)usdt_board_index(dev, q.inode, h.nslots) * sizeof(s[0]);
	if ((uint64_t)st.st_size < off + sizeof(s) ||
	    pread(bfd, s, sizeof(s), (off_t)off) != (ssize_t)sizeof(s))
		goto miss;
	for (i = 0; i < USDT_BOARD_WINDOW && !r; i++)
		r = s[i].dev == dev && s[i].ino == q.inode && s[i].path_hash == hash &&
		    s[i].check == usdt_board_check(dev, q.inode, hash);
	/*
	 * Known, but a tracer watches (SOCKET.watched, root's: protocol.h,
	 * WATCH): ask all the same, so that a tracer that never saw this
	 * file (it lingered) enables it before we go on.
	 */
	if (r && stat(usdt_drti_watched, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0)
		r = 0;
	if (r)
		goto out;
miss:
	/*
	 * Not known (or not to be read): is there a daemon to ask? A board
	 * without its liveness lock (core/protocol.h) is a crashed daemon's,
	 * and the socket beside it would refuse the connection. Nothing else
	 * of the file is used for it, so who owns it does not matter here: the
	 * worst a board not to trust can do is what a missing daemon does,
	 * leave this module unregistered.
	 */
	for (i = 0; i < sizeof(lk); i++)
		((unsigned char *)&lk)[i] = 0;
	lk.l_type = F_WRLCK;
	lk.l_whence = SEEK_SET;
	r = fcntl(bfd, F_OFD_GETLK, &lk) == 0 && lk.l_type == F_UNLCK ? -1 : 0;
out:
	close(bfd);
	return r < 0 ? -1 : r != 0;
}
