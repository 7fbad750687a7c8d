// SPDX-License-Identifier: MIT
/*
 * The sandboxed parser's answer (worker.c), decoded and checked again as
 * if the worker were compromised: every length and count bounded, strings
 * NUL-free and terminated, sizes 1/2/4/8, register names short, and each
 * site's bytes in the file read again here and required to be the NOP
 * sdt.h emits. Names are checked once more by the tracefs printer
 * (usdt_uprobe_def) when the line is built. The stream's format is at the
 * head of worker.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helperd.h"

struct rd {
	const unsigned char *p;
	size_t len, pos;
	bool bad;
};

static void get(struct rd *r, void *out, size_t len)
{
	if (r->bad || r->len - r->pos < len) {
		r->bad = true;
		memset(out, 0, len);
		return;
	}
	memcpy(out, r->p + r->pos, len);
	r->pos += len;
}

static uint32_t get32(struct rd *r)
{
	uint32_t v;

	get(r, &v, sizeof(v));
	return v;
}

static uint64_t get64(struct rd *r)
{
	uint64_t v;

	get(r, &v, sizeof(v));
	return v;
}

/* A string of at most max bytes without NUL into a fresh allocation (NULL for none). */
static char *get_str(struct rd *r, size_t max, bool *null)
{
	uint32_t len = get32(r);
	char *s;

	*null = len == HD_WORKER_NO_STR;
	if (r->bad || *null)
		return NULL;
	if (len > max || r->len - r->pos < len || memchr(r->p + r->pos, '\0', len)) {
		r->bad = true;
		return NULL;
	}
	s = malloc((size_t)len + 1);
	if (!s) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, r->p + r->pos, len);
	s[len] = '\0';
	r->pos += len;
	return s;
}

/* Copies a string into a fixed array; false when absent or too long. */
static bool get_fixed(struct rd *r, char *out, size_t size)
{
	bool null;
	char *s = get_str(r, size - 1, &null);

	if (!s)
		return false;
	strcpy(out, s);
	free(s);
	return true;
}

/* The bytes at the site must be the NOP sdt.h emits: the worker's word is not enough. */
static bool site_is_nop(int fd, enum usdt_arch arch, uint64_t off)
{
	unsigned char b[4];

	if (off > INT64_MAX)
		return false;
	if (arch == USDT_ARCH_AARCH64)
		return pread(fd, b, 4, (off_t)off) == 4 && b[0] == 0x1f && b[1] == 0x20 &&
		       b[2] == 0x03 && b[3] == 0xd5;
	return pread(fd, b, 1, (off_t)off) == 1 && b[0] == 0x90;
}

static int get_probe(struct rd *r, int fd, enum usdt_arch arch, struct usdt_site *p)
{
	bool null;

	uint32_t nargs;

	p->arch = arch;
	p->flags = get32(r);
	nargs = get32(r);
	p->pc = get64(r);
	p->pc_off = get64(r);
	p->sema = get64(r);
	p->sema_off = get64(r);
	p->note_base = get64(r);
	/* Only a count the arg[] array holds ever reaches the probe (and its free). */
	if (r->bad || nargs > USDT_SDT_MAX_ARGS)
		return -EPROTO;
	p->nargs = nargs;
	p->provider = get_str(r, USDT_NAME_INPUT_MAX, &null);
	p->name = get_str(r, USDT_NAME_INPUT_MAX, &null);
	p->args = get_str(r, USDT_ARGS_STR_MAX, &null);
	if (!p->provider || !p->name || !p->args || !get_fixed(r, p->group, sizeof(p->group)) ||
	    !get_fixed(r, p->event, sizeof(p->event)))
		return -EPROTO;
	for (unsigned i = 0; i < p->nargs; i++) {
		struct usdt_argspec *a = &p->arg[i];
		uint32_t kind = get32(r), bits;

		a->size = get32(r);
		bits = get32(r);
		a->value = (int64_t)get64(r);
		if (r->bad || kind > USDT_ARG_MEM || bits > 3 ||
		    (kind != USDT_ARG_UNSUPPORTED && a->size != 1 && a->size != 2 && a->size != 4 &&
		     a->size != 8))
			return -EPROTO;
		a->kind = (enum usdt_argspec_kind)kind;
		a->is_signed = bits & 1;
		a->is_string = bits & 2;
		a->why = "unsupported";
		if (!get_fixed(r, a->reg, sizeof(a->reg)))
			return -EPROTO;
		a->name = get_str(r, USDT_TRACEFS_NAME_MAX, &null);
		if (r->bad)
			return -EPROTO;
	}
	if ((p->sema_off & 1) || !site_is_nop(fd, arch, p->pc_off))
		return -EPROTO;
	return 0;
}

int hd_worker_decode(const unsigned char *buf, size_t len, int fd, struct usdt_notes **out,
		     char *err, size_t errlen)
{
	struct rd r = {.p = buf, .len = len};
	struct usdt_notes *n;
	uint32_t arch, nlog, nacc;
	uint64_t total;
	char magic[4];

	get(&r, magic, 4);
	arch = get32(&r);
	if (r.bad || memcmp(magic, "HDW1", 4) != 0)
		goto bad;
	if (arch == 0xffffffffu) {
		uint32_t e = get32(&r);
		bool null;
		char *msg = get_str(&r, 1024, &null);

		snprintf(err, errlen, "%s", msg ? msg : "unreadable");
		free(msg);
		return e > 0 && e < 4096 ? -(int)e : -EIO;
	}
	if (arch > USDT_ARCH_AARCH64)
		goto bad;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->arch = (enum usdt_arch)arch;
	n->elf_class = get32(&r);
	n->e_type = get32(&r);
	n->flags = get32(&r);
	/* What the worker says it read; n->nsites counts only sites filled in below. */
	total = get64(&r);
	nlog = get32(&r);
	for (uint32_t i = 0; i < nlog && i < HD_WORKER_LOG_MAX && !r.bad; i++) {
		bool null;
		char *s = get_str(&r, 1024, &null);

		if (s)
			hd_dbg("worker: %s", s);
		free(s);
	}
	nacc = get32(&r);
	if (r.bad || nlog > HD_WORKER_LOG_MAX || nacc > 65536 || nacc > total) {
		usdt_notes_free(n);
		goto bad;
	}
	n->sites = calloc(nacc ? nacc : 1, sizeof(*n->sites));
	if (!n->sites) {
		free(n);
		return -ENOMEM;
	}
	/* usdt_notes_free walks nprobes: count only what is filled in. */
	{
		for (uint32_t i = 0; i < nacc; i++) {
			n->nsites++;
			if (get_probe(&r, fd, n->arch, &n->sites[i]) != 0) {
				usdt_notes_free(n);
				goto bad;
			}
		}
		n->naccepted = nacc;
		get(&r, magic, 4);
		if (r.bad || memcmp(magic, "END!", 4) != 0 || r.pos != r.len) {
			usdt_notes_free(n);
			goto bad;
		}
		if (total > nacc)
			hd_dbg("worker: %" PRIu64 " of %" PRIu64 " probes rejected", total - nacc,
			       total);
	}
	*out = n;
	return 0;
bad:
	snprintf(err, errlen, "the parser's answer is malformed");
	return -EPROTO;
}
