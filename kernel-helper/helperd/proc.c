// SPDX-License-Identifier: MIT
/*
 * What /proc says about a process: the mapping that holds an address, the
 * file behind it (opened through map_files, never by the name the process
 * shows), its start time, uid and initial environment; and the cheap "does
 * this file carry our notes at all" check made before a full parse.
 *
 * /proc/PID/maps lines are read by core/maps.c. The path is only used to
 * name the module in LIST answers and to try a literal tracefs path (which
 * is then checked against the fd's (dev, ino)); the file itself is always
 * reached through /proc/PID/map_files/START-END, the mapping's own file.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "helperd.h"
#include "maps.h"
#include "protocol.h"

/*
 * /proc/PID/maps is read with read() into a buffer of 64 KiB and cut into
 * lines in place: no stdio (fgets cost a quarter of a known file's
 * REGISTER, bench/helper/loopcost.sh) and few system calls (the kernel
 * prints as much as the buffer takes). A line never comes near the buffer's
 * size (a path is at most PATH_MAX); one that did would be skipped whole.
 */
#define MAPS_BUF (64 * 1024)

struct maps_reader {
	int fd;
	size_t len, pos;
	bool eof, skip;
	char buf[MAPS_BUF];
};

static int open_proc(pid_t pid, const char *what)
{
	char p[64];
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, what);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

/* pid's maps opened: a reader (free it with maps_close), or NULL and *err. */
static struct maps_reader *maps_open(pid_t pid, int *err)
{
	struct maps_reader *r = malloc(sizeof(*r));
	int fd = open_proc(pid, "maps");

	if (fd < 0 || !r) {
		free(r);
		if (fd >= 0)
			close(fd);
		*err = fd < 0 ? fd : -ENOMEM;
		return NULL;
	}
	r->fd = fd;
	r->len = r->pos = 0;
	r->eof = r->skip = false;
	return r;
}

static void maps_close(struct maps_reader *r)
{
	close(r->fd);
	free(r);
}

/* The next line, NUL-terminated without its newline, or NULL at the end. */
static char *maps_next(struct maps_reader *r)
{
	for (;;) {
		char *line = r->buf + r->pos, *nl = memchr(line, '\n', r->len - r->pos);
		ssize_t n;

		if (nl) {
			*nl = '\0';
			r->pos = (size_t)(nl + 1 - r->buf);
			if (r->skip) {
				r->skip = false;
				continue;
			}
			return line;
		}
		if (r->eof) {
			if (r->pos == r->len || r->skip)
				return NULL;
			r->buf[r->len] = '\0';
			r->pos = r->len;
			return line;
		}
		memmove(r->buf, line, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
		if (r->len == sizeof(r->buf) - 1) {
			r->len = 0; /* a line longer than the buffer: skipped whole */
			r->skip = true;
		}
		n = read(r->fd, r->buf + r->len, sizeof(r->buf) - 1 - r->len);
		if (n <= 0)
			r->eof = true;
		else
			r->len += (size_t)n;
	}
}

/* A hexadecimal number at *p (the maps address fields), advancing *p; every REGISTER scans them. */
static uint64_t hex(const char **p)
{
	uint64_t v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* One maps line into m (core/maps.h), " (deleted)" cut off; false for lines without a file. */
static bool parse_maps_line(char *line, struct hd_mapping *m)
{
	struct usdt_mapping um;
	size_t len;

	if (!usdt_maps_parse_line(line, &um))
		return false;
	m->start = um.start;
	m->end = um.end;
	m->offset = um.offset;
	m->dev = um.dev;
	m->ino = um.ino;
	m->deleted = um.deleted;
	len = strlen(um.path);
	if (um.deleted)
		len -= sizeof(" (deleted)") - 1;
	if (len >= sizeof(m->path))
		len = sizeof(m->path) - 1;
	memcpy(m->path, um.path, len);
	m->path[len] = '\0';
	return true;
}

/*
 * The device and inode fields of a maps line, read without the rest (LIST
 * and the retirement look at every process's every line, and want a few
 * files of them): false for a line that has none.
 */
static bool maps_key(const char *line, uint64_t *dev, uint64_t *ino)
{
	const char *p = line;
	uint64_t maj = 0, min = 0, i = 0;

	for (int field = 0; field < 3; field++) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	maj = hex(&p);
	if (*p++ != ':')
		return false;
	min = hex(&p);
	if (*p++ != ' ')
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		i = i * 10 + (uint64_t)(*p - '0');
	*dev = (uint64_t)makedev((unsigned)maj, (unsigned)min);
	*ino = i;
	return i != 0;
}

int hd_each_mapping(pid_t pid, bool (*want)(uint64_t dev, uint64_t ino, void *arg),
		    int (*fn)(pid_t pid, const struct hd_mapping *m, void *arg), void *arg)
{
	struct hd_mapping *m = malloc(sizeof(*m));
	uint64_t seen[64];
	size_t nseen = 0;
	int ret = 0;
	struct maps_reader *r = m ? maps_open(pid, &ret) : NULL;
	char *line;

	if (!r) {
		free(m);
		return m ? ret : -ENOMEM;
	}
	while ((line = maps_next(r))) {
		uint64_t dev, ino;
		bool dup = false;

		if (want && (!maps_key(line, &dev, &ino) || !want(dev, ino, arg)))
			continue;
		if (!parse_maps_line(line, m))
			continue;
		/* Each file once: a handful of mappings per file, in a row. */
		for (size_t i = 0; i < nseen && !dup; i++)
			dup = seen[i] == (m->ino ^ (m->dev << 40));
		if (dup)
			continue;
		if (nseen < 64)
			seen[nseen++] = m->ino ^ (m->dev << 40);
		ret = fn(pid, m, arg);
		if (ret)
			break;
	}
	maps_close(r);
	free(m);
	return ret > 0 ? 0 : ret;
}

int hd_find_mapping(pid_t pid, uint64_t addr, struct hd_mapping *m)
{
	int ret = -ENOENT;
	struct maps_reader *r = maps_open(pid, &ret);
	char *line;

	if (!r)
		return ret;
	while ((line = maps_next(r))) {
		const char *p = line;
		uint64_t start = hex(&p), end;

		if (*p++ != '-')
			continue;
		end = hex(&p);
		if (*p != ' ' || addr < start || addr >= end)
			continue;
		ret = parse_maps_line(line, m) ? 0 : -ENXIO;
		break;
	}
	maps_close(r);
	return ret;
}

int hd_find_mappings(pid_t pid, const uint64_t *addrs, size_t n, struct hd_mapping *ms, bool *found)
{
	int ret = 0;
	struct maps_reader *r = maps_open(pid, &ret);
	size_t left = n;
	char *line;

	for (size_t i = 0; i < n; i++)
		found[i] = false;
	if (!r)
		return ret;
	while (left && (line = maps_next(r))) {
		const char *p = line;
		uint64_t start = hex(&p), end;

		if (*p++ != '-')
			continue;
		end = hex(&p);
		for (size_t i = 0; i < n && *p == ' '; i++) {
			if (found[i] || addrs[i] < start || addrs[i] >= end)
				continue;
			found[i] =
			    parse_maps_line(line, &ms[i]); /* (it leaves the line as it was) */
			left--;
		}
	}
	maps_close(r);
	return 0;
}

int hd_open_mapping(pid_t pid, const struct hd_mapping *m)
{
	char p[96];
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start,
		 m->end);
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* Reads a small /proc file whole (at most max-1 bytes, NUL-terminated); returns its length or
 * -errno. */
static ssize_t read_proc(pid_t pid, const char *what, char *buf, size_t max)
{
	int fd = open_proc(pid, what);
	size_t len = 0;
	ssize_t r;

	if (fd < 0)
		return fd;
	while (len + 1 < max && (r = read(fd, buf + len, max - 1 - len)) > 0)
		len += (size_t)r;
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

uint64_t hd_start_time(pid_t pid)
{
	char buf[1024], *p;
	unsigned long long st = 0;

	if (read_proc(pid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	/* After the last ')' (the command may hold anything): state is field 3, start time 22. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
		   "%*d %llu",
		   &st) != 1)
		return 0;
	return st;
}

uid_t hd_pid_uid(pid_t pid)
{
	char buf[4096], *p;
	unsigned long uid;

	if (read_proc(pid, "status", buf, sizeof(buf)) <= 0)
		return (uid_t)-1;
	p = strstr(buf, "\nUid:");
	if (!p || sscanf(p + 5, "%lu", &uid) != 1)
		return (uid_t)-1;
	return (uid_t)uid;
}

bool hd_pid_uses_socket(pid_t pid, const char *socket_path)
{
	static const char key[] = USDT_HELPER_SOCKET_ENV "=";
	char *buf = malloc(256 * 1024);
	ssize_t len;
	bool found = false, match = false;

	if (!buf)
		return false;
	len = read_proc(pid, "environ", buf, 256 * 1024);
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1) {
		if (strncmp(buf + i, key, sizeof(key) - 1) != 0)
			continue;
		found = true;
		match = buf[i + (ssize_t)sizeof(key) - 1] &&
			strcmp(buf + i + sizeof(key) - 1, socket_path) == 0;
	}
	free(buf);
	if (len < 0)
		return false;
	return found ? match : strcmp(socket_path, USDT_HELPER_SOCKET_PATH) == 0;
}

/* --- the cheap ELF check --- */

#define SHDRS_MAX (256u * 1024)
#define SHSTRTAB_MAX (256u * 1024)

static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
	return off <= INT64_MAX && pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Name, type, offset and size of a section header of either class. */
static void shdr_fields(const unsigned char *p, bool is64, uint32_t *name, uint32_t *type,
			uint64_t *off, uint64_t *size)
{
	if (is64) {
		Elf64_Shdr s;

		memcpy(&s, p, sizeof(s));
		*name = s.sh_name;
		*type = s.sh_type;
		*off = s.sh_offset;
		*size = s.sh_size;
	} else {
		Elf32_Shdr s;

		memcpy(&s, p, sizeof(s));
		*name = s.sh_name;
		*type = s.sh_type;
		*off = s.sh_offset;
		*size = s.sh_size;
	}
}

unsigned hd_elf_note_kinds(int fd)
{
	unsigned char id[EI_NIDENT];
	uint64_t shoff, stroff = 0, strsize = 0;
	unsigned shnum, shentsize, shstrndx, kinds = 0;
	unsigned char *sh = NULL;
	char *str = NULL;
	bool is64, swap;

	if (!read_at(fd, id, sizeof(id), 0) || memcmp(id, ELFMAG, SELFMAG) != 0)
		return 0;
	is64 = id[EI_CLASS] == ELFCLASS64;
	if (!is64 && id[EI_CLASS] != ELFCLASS32)
		return 0;
	/* Only our own byte order can be probed here. */
	swap =
	    id[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
	if (swap)
		return 0;
	if (is64) {
		Elf64_Ehdr e;

		if (!read_at(fd, &e, sizeof(e), 0))
			return 0;
		shoff = e.e_shoff;
		shnum = e.e_shnum;
		shentsize = e.e_shentsize;
		shstrndx = e.e_shstrndx;
		if (shentsize != sizeof(Elf64_Shdr))
			return 0;
	} else {
		Elf32_Ehdr e;

		if (!read_at(fd, &e, sizeof(e), 0))
			return 0;
		shoff = e.e_shoff;
		shnum = e.e_shnum;
		shentsize = e.e_shentsize;
		shstrndx = e.e_shstrndx;
		if (shentsize != sizeof(Elf32_Shdr))
			return 0;
	}
	/* SHN_XINDEX forms (more than 65279 sections) are not for us. */
	if (shnum == 0 || shstrndx >= shnum || (uint64_t)shnum * shentsize > SHDRS_MAX)
		return 0;
	sh = malloc((size_t)shnum * shentsize);
	if (!sh || !read_at(fd, sh, (size_t)shnum * shentsize, shoff))
		goto out;
	{
		uint32_t n, t;

		shdr_fields(sh + (size_t)shstrndx * shentsize, is64, &n, &t, &stroff, &strsize);
	}
	if (strsize == 0 || strsize > SHSTRTAB_MAX)
		goto out;
	str = malloc(strsize + 1);
	if (!str || !read_at(fd, str, strsize, stroff))
		goto out;
	str[strsize] = '\0';
	for (unsigned i = 0; i < shnum; i++) {
		uint32_t name, type;
		uint64_t off, size;

		shdr_fields(sh + (size_t)i * shentsize, is64, &name, &type, &off, &size);
		if (type != SHT_NOTE || name >= strsize)
			continue;
		if (strcmp(str + name, ".note.usdtkit") == 0)
			kinds |= HD_HAS_USDTKIT;
		else if (strcmp(str + name, ".note.stapsdt") == 0)
			kinds |= HD_HAS_STAPSDT;
	}
out:
	free(sh);
	free(str);
	return kinds;
}
