// SPDX-License-Identifier: MIT
/*
 * The board: the daemon's published list of the files whose events exist,
 * so that a process starting with a known file learns it without a round
 * trip (format and rules: core/protocol.h, "The board").
 *
 * One file beside the socket (SOCKET.known), created whole at start (a
 * temporary file renamed into place, so a reader never sees a short one),
 * never resized or truncated afterwards, unlinked at stop; the daemon writes
 * it through a shared mapping of its own. Readers use pread and check every
 * slot's `check`, so a slot is written field by field with `check` last, and
 * withdrawn by clearing `check` first. A full barrier follows every
 * withdrawal: the caller then reads /proc (retire.c, hd_retire) and must see
 * the mapping of any process that read the slot before it was cleared.
 *
 * The board is an optimisation only: when it cannot be created (a read-only
 * directory, no memory), the daemon logs it once and goes on; every process
 * then asks, as it always could.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "helperd.h"
#include "protocol.h"

#define BOARD_SLOTS 4096u

static struct usdt_board_slot *slots;
static size_t map_len;
static void *map;
static char board_path[4200];
static char watched_path[4200]; /* SOCKET.watched (protocol.h, WATCH): "" without a board */

/* maps' device (makedev of its major:minor) in the board's encoding. */
static uint64_t board_dev(uint64_t maps_dev)
{
	return ((uint64_t)major((dev_t)maps_dev) << 32) | minor((dev_t)maps_dev);
}

int hd_board_open(const char *socket_path)
{
	char tmp[sizeof(board_path) + 8];
	struct usdt_board_hdr h = {
	    .magic = USDT_BOARD_MAGIC,
	    .version = USDT_BOARD_VERSION,
	    .hdr_size = sizeof(struct usdt_board_hdr),
	    .nslots = BOARD_SLOTS,
	    .slot_size = sizeof(struct usdt_board_slot),
	};
	int fd, err;

	if ((size_t)snprintf(board_path, sizeof(board_path), "%s%s", socket_path,
			     USDT_BOARD_SUFFIX) >= sizeof(board_path))
		return -ENAMETOOLONG;
	if ((size_t)snprintf(watched_path, sizeof(watched_path), "%s%s", socket_path,
			     USDT_WATCHED_SUFFIX) >= sizeof(watched_path))
		return -ENAMETOOLONG;
	unlink(watched_path); /* a crashed daemon's */
	snprintf(tmp, sizeof(tmp), "%s.tmp", board_path);
	map_len = sizeof(h) + (BOARD_SLOTS + USDT_BOARD_WINDOW - 1) * sizeof(*slots);
	unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	/* 0644 whatever the umask: every process reads it; clients require it. */
	if (fchmod(fd, 0644) != 0 || ftruncate(fd, (off_t)map_len) != 0)
		goto fail_fd;
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto fail_fd;
	/*
	 * Not in the parse workers: a process reading hostile ELF must never
	 * hold a writable view of what every client trusts. No board otherwise.
	 */
	if (madvise(map, map_len, MADV_DONTFORK) != 0)
		goto fail_map;
	/*
	 * The liveness lock (core/protocol.h): an open-file-description lock
	 * belongs to the open file, which the mapping keeps open after close();
	 * it goes when the daemon's last reference does, at exit or at a crash.
	 * The parse workers never hold it: the mapping is not forked and the
	 * descriptor is closed before any fork.
	 */
	struct flock lk = {.l_type = F_RDLCK, .l_whence = SEEK_SET};

	if (fcntl(fd, F_OFD_SETLK, &lk) != 0)
		goto fail_map;
	close(fd);
	memcpy(map, &h, sizeof(h));
	slots = (struct usdt_board_slot *)((char *)map + sizeof(h));
	if (rename(tmp, board_path) != 0) {
		err = -errno;
		munmap(map, map_len);
		map = NULL;
		slots = NULL;
		unlink(tmp);
		return err;
	}
	return 0;
fail_map:
	err = -errno;
	munmap(map, map_len);
	map = NULL;
	close(fd);
	unlink(tmp);
	return err;
fail_fd:
	err = -errno;
	close(fd);
	unlink(tmp);
	return err;
fail:
	return -errno;
}

void hd_board_close(void)
{
	if (!map)
		return;
	/* Unlinked first: from now on every process asks. */
	unlink(board_path);
	unlink(watched_path);
	munmap(map, map_len);
	map = NULL;
	slots = NULL;
}

static struct usdt_board_slot *find(uint64_t dev, uint64_t ino, uint64_t hash)
{
	struct usdt_board_slot *w = &slots[usdt_board_index(dev, ino, BOARD_SLOTS)];

	for (unsigned i = 0; i < USDT_BOARD_WINDOW; i++)
		if (w[i].check && w[i].dev == dev && w[i].ino == ino && w[i].path_hash == hash)
			return &w[i];
	return NULL;
}

bool hd_board_publish(uint64_t maps_dev, uint64_t ino, const char *path)
{
	uint64_t dev = board_dev(maps_dev), hash = usdt_board_path_hash(path);
	struct usdt_board_slot *w;

	if (!slots)
		return false;
	if (find(dev, ino, hash))
		return true;
	w = &slots[usdt_board_index(dev, ino, BOARD_SLOTS)];
	for (unsigned i = 0; i < USDT_BOARD_WINDOW; i++) {
		if (w[i].check)
			continue;
		w[i].dev = dev;
		w[i].ino = ino;
		w[i].path_hash = hash;
		__atomic_store_n(&w[i].check, usdt_board_check(dev, ino, hash), __ATOMIC_RELEASE);
		return true;
	}
	return false; /* a full window: this file's processes ask */
}

void hd_board_withdraw(uint64_t maps_dev, uint64_t ino, const char *path)
{
	struct usdt_board_slot *s;

	if (!slots)
		return;
	s = find(board_dev(maps_dev), ino, usdt_board_path_hash(path));
	if (s) {
		__atomic_store_n(&s->check, 0, __ATOMIC_RELAXED);
		s->dev = s->ino = s->path_hash = 0;
	}
	/* Before the caller reads /proc: see the head comment. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * A watcher is there (on) or the last went: SOCKET.watched exists while
 * one is, so that drti asks for a board file too (protocol.h, WATCH).
 */
void hd_board_watched(bool on)
{
	int fd;

	if (!map || !watched_path[0])
		return;
	if (!on) {
		unlink(watched_path);
		return;
	}
	fd = open(watched_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)fchmod(fd, 0644);
		close(fd);
	}
}
