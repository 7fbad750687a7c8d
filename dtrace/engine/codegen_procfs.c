/* SPDX-License-Identifier: MIT */
/*
 * DTrace's own translators (dtrace/consumer/dlib.c): the members of
 * psinfo_t and lwpsinfo_t a task gives (N_KTASK), as DTrace for Linux's
 * procfs.d computes them from struct task_struct, over codegen_btf.c.
 *
 * Theory. Each member is a chain of kernel reads from the task's address:
 * a field at the offset the running kernel's BTF gives, through the
 * pointers DTrace's translator follows (real_parent->tgid,
 * signal->pids[PIDTYPE_PGID]->numbers[0].nr, cred->uid.val ...), each
 * read by bpf_probe_read_kernel into a zeroed word: a read that fails
 * (a null task: `xlate <psinfo_t> (NULL)`) gives 0, not a fault. A value is
 * zero-extended here; the member's type (the parser's cast) narrows it.
 * pr_fname and pr_name are char arrays: their value is the address of the
 * task's comm (a char *, read as the kernel's string where a string is
 * wanted, indexed byte by byte). The argument members are the process's
 * (mm_struct): pr_psargs its first argument (argv[0]), pr_argc the count
 * at the bottom of its initial stack, pr_argv and pr_envp the vectors
 * above it, read from the current process (right for curpsinfo).
 */
#include <string.h>

#include "cg.h"

/* Linux's pid types (enum pid_type, 4.19 and later) and task states (linux/sched.h) */
#define PIDTYPE_PGID 2
#define PIDTYPE_SID 3

struct kpath {
	struct cg *g;
	const struct dt_node *n;
	bool bad;
};

static unsigned off(struct kpath *k, const char *strct, const char *path)
{
	unsigned o = 0;

	if (!k->bad && cg_btf_offset(k->g, strct, path, &o)) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "the kernel's BTF (/sys/kernel/btf/vmlinux) has no %s.%s, which %s reads",
			 strct, path, k->n->name);
		cg_fail(k->g, k->n, msg);
		k->bad = true;
	}
	return o;
}

/* `size` bytes of the kernel's at addr + o, zero-extended (0 when unreadable). */
static char *kread(const char *addr, unsigned o, unsigned size)
{
	struct dt_buf b = {0};

	dt_buf_printf(&b,
		      "({ __u64 kr_ = 0; bpf_probe_read_kernel(&kr_, %u, (void *)((__u64)(%s) + "
		      "%u)); kr_; })",
		      size, addr, o);
	return b.s;
}

/* kread of a pointer found by kread: the chain one step on. */
static char *kread2(char *addr, unsigned o, unsigned size)
{
	char *r = kread(addr, o, size);

	dt_free(addr);
	return r;
}

static const char *state_field(struct kpath *k, unsigned *size)
{
	unsigned o;

	*size = 4;
	if (!cg_btf_offset(k->g, "task_struct", "__state", &o))
		return "__state"; /* Linux 5.14 and later */
	*size = 8;
	return "state";
}

/* DTrace's reading of a task's state: its numeric pr_state, or its letter (pr_sname). */
static char *state(struct kpath *k, const char *t, bool letter)
{
	static const struct {
		unsigned bit;
		int num;
		char sname;
	} m[] = {{0x1, 1, 'S'},	 {0x2, 1, 'S'},	 {0x4, 4, 'T'},	  {0x8, 4, 'T'},  {0x20, 3, 'Z'},
		 {0x10, 3, 'Z'}, {0x80, 3, 'Z'}, {0x100, 7, 'W'}, {0x200, 7, 'W'}};
	struct dt_buf b = {0};
	unsigned size, o;
	const char *f = state_field(k, &size);
	char *s;
	size_t i;

	o = off(k, "task_struct", f);
	s = kread(t, o, size);
	dt_buf_printf(&b, "({ __u64 st_ = %s; ", s);
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		dt_buf_printf(&b, "(st_ & 0x%x) ? %d : ", m[i].bit, letter ? m[i].sname : m[i].num);
	dt_buf_printf(&b, "%d; })", letter ? 'R' : 2);
	dt_free(s);
	return b.s;
}

/* The mm_struct's field f (unsigned long) of task t, 0 for a task without one. */
static char *mm_field(struct kpath *k, const char *t, const char *f)
{
	unsigned mo = off(k, "task_struct", "mm"), fo = off(k, "mm_struct", f);
	struct dt_buf b = {0};
	char *mm = kread(t, mo, 8), *v = kread("mm_", fo, 8);

	dt_buf_printf(&b, "({ __u64 mm_ = %s; mm_ ? %s : 0; })", mm, v);
	dt_free(mm);
	dt_free(v);
	return b.s;
}

/* The pid of type `type` of t's thread group (pids[type]->numbers[0].nr), 0 without one. */
static char *group_pid(struct kpath *k, const char *t, unsigned type)
{
	unsigned so = off(k, "task_struct", "signal"), po = off(k, "signal_struct", "pids");
	unsigned no = off(k, "pid", "numbers"), nr = off(k, "upid", "nr");

	return kread2(kread2(kread(t, so, 8), po + 8 * type, 8), no + nr, 4);
}

static char *cred_id(struct kpath *k, const char *t, const char *id)
{
	char f[16];

	snprintf(f, sizeof(f), "%s.val", id);
	return kread2(kread(t, off(k, "task_struct", "cred"), 8), off(k, "cred", f), 4);
}

static void set_int(struct cv *v, char *text, unsigned size)
{
	v->type = TY_INT;
	v->text = text;
	v->size = size;
	v->is_unsigned = true;
}

/* A string member: SV_USER at the address, or "" where the address is 0. */
static void user_str(struct cv *v, char *addr)
{
	struct dt_buf b = {0};

	v->type = TY_STR;
	v->skind = SV_COND;
	v->sub = dt_xmalloc(2 * sizeof(*v->sub));
	memset(v->sub, 0, 2 * sizeof(*v->sub));
	dt_buf_printf(&b, "(%s) != 0", addr);
	v->text = b.s;
	v->sub[0].type = TY_STR;
	v->sub[0].skind = SV_USER;
	v->sub[0].text = addr;
	v->sub[1].type = TY_STR;
	v->sub[1].skind = SV_CONST;
	v->sub[1].text = dt_xstrdup("");
}

static char *args_at(struct kpath *k, const char *t, const char *what)
{
	struct dt_buf b = {0};
	char *ss = mm_field(k, t, "start_stack");

	if (!strcmp(what, "argc"))
		dt_buf_printf(&b,
			      "({ __u64 ss_ = %s, ac_ = 0; if (ss_) bpf_probe_read_user(&ac_, 8, "
			      "(void *)ss_); ac_; })",
			      ss);
	else if (!strcmp(what, "argv"))
		dt_buf_printf(&b, "({ __u64 ss_ = %s; ss_ ? ss_ + 8 : 0; })", ss);
	else
		dt_buf_printf(&b,
			      "({ __u64 ss_ = %s, ac_ = 0; if (ss_) bpf_probe_read_user(&ac_, 8, "
			      "(void *)ss_); ss_ ? ss_ + 8 * (ac_ + 2) : 0; })",
			      ss);
	dt_free(ss);
	return b.s;
}

void cg_ktask(struct cg *g, const struct dt_node *n, struct cv *v)
{
	struct kpath k = {g, n, false};
	struct cv tv = {0};
	const char *m = n->name;
	char *t, *r = NULL;
	unsigned size = 4;

	cg_int(g, n->a, &tv);
	if (g->failed)
		return;
	t = tv.text;
	if (!strcmp(m, "pr_pid"))
		r = kread(t, off(&k, "task_struct", "tgid"), 4);
	else if (!strcmp(m, "pr_lwpid"))
		r = kread(t, off(&k, "task_struct", "pid"), 4);
	else if (!strcmp(m, "pr_ppid"))
		r = kread2(kread(t, off(&k, "task_struct", "real_parent"), 8),
			   off(&k, "task_struct", "tgid"), 4);
	else if (!strcmp(m, "pr_pgid") || !strcmp(m, "pr_sid"))
		r = group_pid(&k, t, m[4] == 'g' ? PIDTYPE_PGID : PIDTYPE_SID);
	else if (!strcmp(m, "pr_uid") || !strcmp(m, "pr_euid") || !strcmp(m, "pr_gid") ||
		 !strcmp(m, "pr_egid"))
		r = cred_id(&k, t, m + 3);
	else if (!strcmp(m, "pr_ttydev")) {
		char *s = kread(t, off(&k, "task_struct", "signal"), 8);
		char *tty = kread2(s, off(&k, "signal_struct", "tty"), 8);
		struct dt_buf b = {0};

		dt_buf_printf(&b, "({ __u64 tt_ = %s; tt_ ? tt_ : (__u64)-1; })", tty);
		dt_free(tty);
		r = b.s;
		size = 8;
	} else if (!strcmp(m, "pr_fname") || !strcmp(m, "pr_name")) {
		struct dt_buf b = {0};

		dt_buf_printf(&b, "((__u64)(%s) + %u)", t, off(&k, "task_struct", "comm"));
		r = b.s;
		size = 8;
	} else if (!strcmp(m, "pr_psargs")) {
		user_str(v, mm_field(&k, t, "arg_start"));
		cv_free(&tv);
		return;
	} else if (!strcmp(m, "pr_argc") || !strcmp(m, "pr_argv") || !strcmp(m, "pr_envp")) {
		r = args_at(&k, t, m + 3);
		size = 8;
	} else if (!strcmp(m, "pr_flag")) {
		unsigned sz;
		const char *f = state_field(&k, &sz);
		char *s = kread(t, off(&k, "task_struct", f), sz);
		struct dt_buf b = {0};

		dt_buf_printf(&b, "((%s) & 0x4 ? 1 : 0)", s); /* __TASK_STOPPED: PR_STOPPED */
		dt_free(s);
		r = b.s;
	} else if (!strcmp(m, "pr_state") || !strcmp(m, "pr_sname")) {
		r = state(&k, t, !strcmp(m, "pr_sname"));
		size = 1;
	} else if (!strcmp(m, "pr_pri"))
		r = kread(t, off(&k, "task_struct", "prio"), 4);
	else if (!strcmp(m, "pr_onpro")) {
		unsigned o;

		if (cg_btf_offset(g, "task_struct", "thread_info.cpu", &o))
			o = off(&k, "task_struct", "cpu");
		r = kread(t, o, 4);
	} else {
		cg_err(g, n, "this member of DTrace's translators");
	}
	cv_free(&tv);
	if (!r || k.bad) {
		dt_free(r);
		return;
	}
	set_int(v, r, size);
	if (!strcmp(m, "pr_fname") || !strcmp(m, "pr_name")) {
		v->ptr = dt_xstrdup("char");
		v->kernel = true; /* the task's comm */
	}
}
