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
 * This module's file, identified without /proc (issue 33, item 7): its path,
 * then stat() of it gives its device and inode, at the cost of one path
 * walk. The PROCMAP_QUERY route costs the process's first look-up under
 * /proc/self (open, ioctl, close: about 20 µs cold, two thirds of a known
 * file's start, bench/helper/README.md), the stat about 2 µs. The path:
 *   - the executable's, when our note lies in a PT_LOAD of the program
 *     headers at AT_PHDR: the path it was executed by (AT_EXECFN);
 *   - a library's (a constructor's only, not drti_lib's: ld.so holds its
 *     lock around constructors, so its list does not change under us; not
 *     under MemorySanitizer, below):
 *     the name the loader opened it by, from its list of modules (the
 *     executable's DT_DEBUG entry points to it, the debuggers' r_debug), the
 *     one whose dynamic section is ours (the linker's _DYNAMIC).
 * Returns 1 with *dev, *ino (dev as maps prints it: major << 32 | minor),
 * else 0 (no PT_PHDR, a static program's library, a name that no longer
 * resolves, a big inode under -m32).
 *
 * The path is the kernel's or the loader's but names the file only as long
 * as nobody renames another over it (or an earlier constructor changes the
 * directory a relative path starts from). So it is trusted for a hit only
 * (the caller then still checks the board's slot, and a miss falls back to
 * the query): a wrong file would have to be on the board while ours is
 * not, and then costs this process its events, never more.
 */
#if defined(__LP64__) || defined(_LP64)
typedef Elf64_Phdr usdt_drti_phdr;
typedef Elf64_Dyn usdt_drti_dyn;
#else
typedef Elf32_Phdr usdt_drti_phdr;
typedef Elf32_Dyn usdt_drti_dyn;
#endif

/*
 * MemorySanitizer sees the loader's list as never written (ld.so is not
 * instrumented, and a dlopen's entries come from the intercepted malloc):
 * reading it would report use-of-uninitialized-value in the user's program.
 * An MSan build takes the maps query instead (tests/checkers).
 */
#if !defined(USDT_DRTI_LIBRARY) && !defined(USDT_DRTI_NO_LOADER_LIST)
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define USDT_DRTI_NO_LOADER_LIST 1
#endif
#endif
#endif

#if !defined(USDT_DRTI_LIBRARY) && !defined(USDT_DRTI_NO_LOADER_LIST)
/*
 * The loader's list of modules, as debuggers read it: the System V ABI's
 * r_debug and link_map heads, declared here rather than taken from
 * <link.h>, whose glibc declares _DYNAMIC without the weak we need.
 */
struct usdt_drti_link_map {
	unsigned long l_addr;
	const char *l_name;
	const void *l_ld;
	const struct usdt_drti_link_map *l_next, *l_prev;
};
struct usdt_drti_r_debug {
	int r_version;
	const struct usdt_drti_link_map *r_map;
};

/* This module's dynamic section (none, 0, in a static program). */
extern const char _DYNAMIC[] __attribute__((weak, visibility("hidden")));

static const char *usdt_drti_loaded_path(const usdt_drti_phdr *ph, unsigned long n,
					 unsigned long bias)
{
	const usdt_drti_dyn *d = 0;
	const struct usdt_drti_r_debug *r = 0;
	const struct usdt_drti_link_map *l;
	unsigned long i;

	if (!_DYNAMIC)
		return 0;
	for (i = 0; i < n; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			d = (const usdt_drti_dyn *)(bias + (unsigned long)ph[i].p_vaddr);
	for (i = 0; d && i < 4096 && d[i].d_tag != DT_NULL; i++)
		if (d[i].d_tag == DT_DEBUG)
			r = (const struct usdt_drti_r_debug *)(unsigned long)d[i].d_un.d_ptr;
	for (l = r ? r->r_map : 0, i = 0; l && i < 65536; l = l->l_next, i++)
		if ((const void *)l->l_ld == (const void *)_DYNAMIC)
			return l->l_name && l->l_name[0] ? l->l_name : 0;
	return 0;
}
#endif

static int usdt_drti_module_file(uint64_t *dev, uint64_t *ino)
{
	const usdt_drti_phdr *ph = (const usdt_drti_phdr *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM), i, bias = 0, note, at;
	const char *path;
	struct stat st;
	uint64_t d;
	int based = 0, in = 0;

	if (!ph || n == 0 || n > 1024)
		return 0;
	for (i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR) {
			bias = (unsigned long)ph - (unsigned long)ph[i].p_vaddr;
			based = 1;
		}
	if (!based)
		return 0;
	note = (unsigned long)USDT_DRTI_NOTE;
	for (i = 0; i < n && !in; i++) {
		at = note - bias - (unsigned long)ph[i].p_vaddr;
		in = ph[i].p_type == PT_LOAD && at < (unsigned long)ph[i].p_memsz;
	}
#if !defined(USDT_DRTI_LIBRARY) && !defined(USDT_DRTI_NO_LOADER_LIST)
	path = in ? (const char *)getauxval(AT_EXECFN) : usdt_drti_loaded_path(ph, n, bias);
#else
	path = in ? (const char *)getauxval(AT_EXECFN) : 0;
#endif
	if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	/* glibc's and musl's dev_t: Linux's encoding, 64 bits wide */
	d = (uint64_t)st.st_dev;
	*dev = ((((d >> 8) & 0xfffu) | ((d >> 32) & 0xfffff000u)) << 32) |
	       ((d & 0xffu) | ((d >> 12) & 0xffffff00u));
	*ino = (uint64_t)st.st_ino;
	return 1;
}

/*
 * Whether the board's window for (dev, ino) holds a valid slot of that file:
 * 1, 0 (not there, or the window could not be read). With a path hash the
 * slot must have been published for that path (the PROCMAP_QUERY route);
 * without one (the file's stat) any path of the file will do: the
 * events are the inode's, and a slot is published while they exist.
 */
static int usdt_drti_on_board(int bfd, const struct usdt_board_hdr *h, uint64_t size, uint64_t dev,
			      uint64_t ino, const uint64_t *hash)
{
	struct usdt_board_slot s[USDT_BOARD_WINDOW];
	uint64_t off = sizeof(*h) + (uint64_t)usdt_board_index(dev, ino, h->nslots) * sizeof(s[0]);
	unsigned i;

	if (size < off + sizeof(s) || pread(bfd, s, sizeof(s), (off_t)off) != (ssize_t)sizeof(s))
		return 0;
	for (i = 0; i < USDT_BOARD_WINDOW; i++)
		if (s[i].dev == dev && s[i].ino == ino && (!hash || s[i].path_hash == *hash) &&
		    s[i].check == usdt_board_check(dev, ino, s[i].path_hash))
			return 1;
	return 0;
}

/*
 * Whether the daemon's board says this module's file is registered already
 * (core/protocol.h, "The board"): its events exist, so there is
 * nothing to ask. The file is first named by its path (the executable's,
 * or the library's as the loader opened it: usdt_drti_module_file, no
 * /proc); when that cannot be or misses, it is the one the kernel maps at
 * our note's address (PROCMAP_QUERY gives its
 * device, inode and path exactly as the daemon reads them from maps). The
 * board is read with pread only, and only if it
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
 * stat (or the maps query), on a miss the maps query and the fcntl.
 */
static int usdt_drti_known(void)
{
	struct flock lk;
	struct usdt_drti_pmq q;
	struct usdt_board_hdr h;
	struct stat st;
	char name[512];
	uint64_t dev, ino, hash, size;
	unsigned i;
	long r;
	int fd, bfd, trusted;

	/*
	 * The board first: where there is none (a daemon run with --no-board,
	 * a socket left without its daemon) the cheap failing open() spares
	 * the file's identification, the dearer half.
	 */
	bfd = open(usdt_drti_board, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (bfd < 0)
		return 0;
	/*
	 * Only a board that is root's and writable by nobody else is read.
	 * The module's file by its path first, with its window found by the size
	 * alone (a header and nslots + USDT_BOARD_WINDOW - 1 slots): a known
	 * file's start reads no header, one pread less. A slot is taken only
	 * with a valid 64-bit check of its own fields, which nothing but a
	 * slot of this format gives; anything else (a size that fits no
	 * board, a miss) goes on to the header and the maps query.
	 */
	trusted = fstat(bfd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
		  (st.st_mode & 022) == 0;
	size = trusted && st.st_size > 0 ? (uint64_t)st.st_size : 0;
	r = 0;
	if (size > sizeof(h) && (size - sizeof(h)) % sizeof(struct usdt_board_slot) == 0 &&
	    usdt_drti_module_file(&dev, &ino)) {
		uint64_t n = (size - sizeof(h)) / sizeof(struct usdt_board_slot);

		h.nslots =
		    n >= USDT_BOARD_WINDOW && n - (USDT_BOARD_WINDOW - 1) <= USDT_BOARD_SLOTS_MAX
			? (uint32_t)(n - (USDT_BOARD_WINDOW - 1))
			: 0;
		if (h.nslots && (r = usdt_drti_on_board(bfd, &h, size, dev, ino, 0)) != 0)
			goto out;
	}
	/*
	 * Only a version-2 board is read further, and only it has the
	 * liveness lock (an older daemon's never does: then ask).
	 */
	if (pread(bfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != USDT_BOARD_MAGIC ||
	    h.version != USDT_BOARD_VERSION)
		goto out;
	if (!trusted || h.hdr_size != sizeof(h) || h.slot_size != sizeof(struct usdt_board_slot) ||
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
	if ((r = usdt_drti_on_board(bfd, &h, size, dev, q.inode, &hash)) != 0)
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
	/*
	 * Known, but a tracer watches (SOCKET.watched, root's: protocol.h,
	 * WATCH): ask all the same, so that a tracer that never saw this
	 * file (it lingered) enables it before we go on.
	 */
	if (r > 0 && stat(usdt_drti_watched, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0)
		r = 0;
	return r < 0 ? -1 : r != 0;
}
