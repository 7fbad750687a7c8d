/* SPDX-License-Identifier: MIT */
/*
 * drti's debug line (USDTKIT_DEBUG=1): one fixed buffer built without
 * stdio and written with a single write(2), async-signal-safe.
 *
 * Not a translation unit of its own: drti.c #includes it at one place,
 * after the definitions it uses, so that embed.py pastes drti as one
 * source (`dtrace -G` compiles that with the user's compiler, which has
 * no include path to ours) and every name stays static. The rules of
 * drti.c's opening comment hold here too (C89, no malloc, no stdio).
 */

/* A debug line under construction: fixed buffer, silently truncated. */
struct usdt_drti_line {
	char buf[320];
	unsigned len;
};

static void usdt_drti_put(struct usdt_drti_line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

static void usdt_drti_put_num(struct usdt_drti_line *l, unsigned long v)
{
	char d[24];
	unsigned n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n > 0 && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = d[--n];
}

static void usdt_drti_put_errno(struct usdt_drti_line *l, int e)
{
	/* strerror() is neither async-signal-safe nor stable: names of the likely ones. */
	/* clang-format off */
	static const struct {
		int e;
		const char *name;
	} names[] = {
		{ ENOENT, "ENOENT" }, { ECONNREFUSED, "ECONNREFUSED" }, { EACCES, "EACCES" },
		{ EAGAIN, "EAGAIN" }, { EPERM, "EPERM" }, { EPROTO, "EPROTO" },
		{ EPROTOTYPE, "EPROTOTYPE" }, { ENOTSOCK, "ENOTSOCK" }, { EPIPE, "EPIPE" },
		{ ECONNRESET, "ECONNRESET" }, { EINVAL, "EINVAL" }, { ENOTDIR, "ENOTDIR" },
		{ EMFILE, "EMFILE" }, { ENOMEM, "ENOMEM" }, { ESRCH, "ESRCH" },
	};
	/* clang-format on */
	unsigned i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].e == e) {
			usdt_drti_put(l, names[i].name);
			return;
		}
	}
	usdt_drti_put(l, "errno ");
	usdt_drti_put_num(l, (unsigned long)(e < 0 ? -e : e));
}

static void usdt_drti_put_hex(struct usdt_drti_line *l, unsigned long a)
{
	unsigned k;

	usdt_drti_put(l, "0x");
	for (k = sizeof(a) * 2; k-- > 0 && l->len < sizeof(l->buf) - 1;)
		l->buf[l->len++] = "0123456789abcdef"[(a >> (k * 4)) & 0xf];
}

static void usdt_drti_emit(struct usdt_drti_line *l)
{
	ssize_t ignored;

	l->buf[l->len++] = '\n';
	ignored = write(2, l->buf, l->len);
	(void)ignored;
}

/* "usdtkit drti: <what>[ PID], metadata note at 0x...: " */
static void usdt_drti_begin(struct usdt_drti_line *l, const char *what, int with_pid)
{
	l->len = 0;
	usdt_drti_put(l, "usdtkit drti: ");
	usdt_drti_put(l, what);
	if (with_pid) {
		usdt_drti_put(l, " ");
		usdt_drti_put_num(l, (unsigned long)getpid());
	}
	usdt_drti_put(l, ", metadata note at ");
	usdt_drti_put_hex(l, (unsigned long)USDT_DRTI_NOTE);
	usdt_drti_put(l, ": ");
}
