// SPDX-License-Identifier: MIT
/*
 * Lines packed into one write() to uprobe_events (the tracefs uprobe
 * layer, tracefs.c), and slices of writing bounded in time.
 *
 * Why batches. The kernel's cost of a line grows with the number of
 * uprobe events that exist (bench/helper/README.md, "The kernel's cost of
 * writing N events"): 10,000 events took 24 s written one line per
 * write() and 7.5 s packed 64 KiB per write(), the 10,000 sites of one
 * event 61 s against 16 s to remove. So lines go out packed, at most
 * USDT_TRACEFS_BATCH_MAX bytes per write().
 *
 * What a batch loses is the per-line result: the kernel runs the lines of
 * a write() in order and stops at the first that fails, whose errno the
 * write() returns; the lines before it were run, those after it were
 * not, and nothing says which line it was. So a batch that fails is
 * written again a line at a time, each line's own result kept: a removal
 * whose line the batch had run answers ENOENT (gone: what was wanted); a
 * definition the batch had made answers EEXIST, which the caller tells
 * apart (tracefs_events.c: a site of ours in a group that did not exist
 * before is ours).
 *
 * Why slices. A caller that must not wait long (the daemon's writer
 * thread, taking turns between users) writes for a budget of time: each
 * batch is sized from the kernel's recent cost per line (t->line_ns, a
 * moving average over every batch written), so that it ends within the
 * budget; at least one line is written per slice. And a caller whose
 * other work waits (the writer: another user's job queued during one
 * user's bulk slice) sets t->yield: the slice then ends at its next batch.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracefs.h"
#include "tracefs_int.h"

uint64_t usdt_tracefs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool usdt_tracefs_yielding(const struct usdt_tracefs *t)
{
	return t->yield && atomic_load(t->yield);
}

size_t usdt_tracefs_batch_lines(struct usdt_tracefs *t, uint64_t budget_ns)
{
	/*
	 * The larger of the average and the last batch's: the cost grows with
	 * the events that exist, and a batch sized on an average that lags
	 * behind ran for many times its budget (a 20 ms slice of one user's
	 * 12,000 sites held another user's new file for hundreds of ms).
	 */
	uint64_t per = t->line_ns > t->last_ns ? t->line_ns : t->last_ns;
	uint64_t n;

	if (!per)
		per = 20000; /* a first guess: 20 us */
	n = budget_ns / per;

	return n < 1				 ? 1
	       : n > USDT_TRACEFS_BATCH_MAX / 32 ? USDT_TRACEFS_BATCH_MAX / 32
						 : (size_t)n;
}

/* The cost per line of a batch just written, folded into the average. */
static void account(struct usdt_tracefs *t, uint64_t ns, size_t lines)
{
	uint64_t per = ns / (lines ? lines : 1);

	t->line_ns = t->line_ns ? (t->line_ns * 3 + per) / 4 : per;
	t->last_ns = per;
}

int usdt_tracefs_write_many(struct usdt_tracefs *t, const char *buf, size_t len, size_t lines)
{
	uint64_t t0 = usdt_tracefs_now_ns();
	ssize_t w;

	if (!len || len > USDT_TRACEFS_BATCH_MAX || buf[len - 1] != '\n')
		return -EINVAL;
	do
		w = write(t->fd, buf, len);
	while (w < 0 && errno == EINTR);
	if (usdt_tracefs_write_hook)
		usdt_tracefs_write_hook();
	account(t, usdt_tracefs_now_ns() - t0, lines);
	if (w == (ssize_t)len)
		return 0;
	return w < 0 ? -errno : -EIO;
}

/* Appends line and '\n' to b (USDT_TRACEFS_BATCH_MAX bytes); false when it does not fit. */
bool usdt_tracefs_batch_add(struct usdt_tracefs_batch *b, const char *line)
{
	size_t l = strlen(line);

	if (b->len + l + 1 > USDT_TRACEFS_BATCH_MAX || memchr(line, '\n', l))
		return false;
	memcpy(b->buf + b->len, line, l);
	b->buf[b->len + l] = '\n';
	b->len += l + 1;
	b->lines++;
	return true;
}

int usdt_tracefs_run_lines(struct usdt_tracefs *t, char *const *lines, size_t n, size_t *next,
			   int *err, uint64_t budget_ns)
{
	struct usdt_tracefs_batch *b = malloc(sizeof(*b));
	uint64_t start = usdt_tracefs_now_ns();

	if (!b)
		return -ENOMEM;
	while (*next < n) {
		uint64_t spent = usdt_tracefs_now_ns() - start;
		size_t want, first = *next;

		if ((spent >= budget_ns || usdt_tracefs_yielding(t)) && first > 0 && b->lines)
			break;
		want = usdt_tracefs_batch_lines(t, budget_ns > spent ? budget_ns - spent : 0);
		b->len = b->lines = 0;
		while (*next < n && b->lines < want && usdt_tracefs_batch_add(b, lines[*next]))
			++*next;
		if (!b->lines) {
			/* A line no batch takes: written alone, which says why. */
			err[*next] = usdt_tracefs_write(t, lines[*next], NULL, 0);
			++*next;
			continue;
		}
		if (usdt_tracefs_write_many(t, b->buf, b->len, b->lines) == 0) {
			for (size_t i = first; i < *next; i++)
				err[i] = 0;
			continue;
		}
		/* Which line failed is not said: each again alone, with its own result. */
		for (size_t i = first; i < *next; i++)
			err[i] = usdt_tracefs_write(t, lines[i], NULL, 0);
	}
	free(b);
	return *next < n;
}
