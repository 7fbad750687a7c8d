// SPDX-License-Identifier: MIT
/*
 * The writer: the one thread that writes files' events to uprobe_events,
 * so that the loop never waits on them (issue 33, item 1).
 *
 * Why a thread. The kernel's cost of a line grows with the number of
 * events that exist (bench/helper/README.md: 10,000 events take seconds
 * to tens of seconds to create or remove), and a write() cannot be
 * interrupted: slices taken in the loop would still hold it for the
 * longest write, and a loop that interleaves its clients with slices of
 * writing serves both slower. A thread takes the writes off the loop
 * entirely: the loop answers accepts, LIST, REGISTER of a known file and
 * UNREGISTER however much writing is pending, and a new file's REGISTER
 * waits only for its own events.
 *
 * What it touches. A job's step function runs on the writer thread and
 * touches only the job's own memory (its lines or notes, copies made by
 * the loop) and the tracefs descriptor; the job's `done` runs on the
 * loop's thread (the eventfd in the epoll set, HD_TAG_WRITER), and only
 * it touches the registry. The loop touches a queued job only to cancel
 * it (an atomic flag the step reads).
 *
 * Fair between uids. Jobs wait in one queue per uid; the thread takes
 * the uids in turn, one slice (SLICE_NS of writing, tracefs_batch.c sizing
 * the batches from the kernel's recent cost per line) of the head job of
 * each: a uid with one small file waits one slice per other uid with work,
 * never for another user's 12,000-site file to be done.
 *
 * Before the thread starts (start-up recovery and scan) and after it
 * stopped (SIGTERM), a job runs in line to its end, its `done` called
 * before hd_writer_submit returns.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "helperd.h"

/* A turn of one uid: the time another uid's work may wait per uid with work queued. */
#define SLICE_NS (20ull * 1000 * 1000)

struct uidq {
	struct uidq *next;
	uid_t uid;
	struct hd_wjob *head, *tail;
};

static struct {
	enum hd_tag tag; /* HD_TAG_WRITER: epoll data points here */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool running, stopping;
	int efd;
	struct uidq *queues; /* uids with jobs, in turn order */
	struct uidq *turn;   /* the next to serve */
	struct hd_wjob *done, **done_tail;
	unsigned queued;
} w = {.tag = HD_TAG_WRITER, .efd = -1};

static struct hd_wjob *pick(void)
{
	struct uidq *q = w.turn ? w.turn : w.queues;

	for (; q && !q->head; q = q->next)
		;
	if (!q)
		for (q = w.queues; q && !q->head; q = q->next)
			;
	if (!q)
		return NULL;
	w.turn = q->next;
	return q->head;
}

static void finish(struct hd_wjob *j)
{
	struct uidq **pp = &w.queues;

	while (*pp && (*pp)->uid != j->uid)
		pp = &(*pp)->next;
	if (*pp) {
		struct uidq *q = *pp;

		q->head = j->next;
		if (!q->head) {
			*pp = q->next;
			if (w.turn == q)
				w.turn = q->next;
			free(q);
		}
	}
	w.queued--;
	j->next = NULL;
	*w.done_tail = j;
	w.done_tail = &j->next;
}

static void *writer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&w.lock);
	for (;;) {
		struct hd_wjob *j = pick();
		bool more;

		if (!j) {
			if (w.stopping)
				break;
			pthread_cond_wait(&w.cond, &w.lock);
			continue;
		}
		pthread_mutex_unlock(&w.lock);
		j->cut = atomic_load(&j->cancel);
		more = !j->cut && j->step(j, SLICE_NS);
		pthread_mutex_lock(&w.lock);
		if (!more) {
			uint64_t one = 1;

			finish(j);
			if (write(w.efd, &one, sizeof(one)) < 0) {
				/* (an eventfd's counter cannot overflow here) */
			}
		}
	}
	pthread_mutex_unlock(&w.lock);
	return NULL;
}

int hd_writer_start(int epfd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &w};
	int ret;

	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	w.done_tail = &w.done;
	w.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w.efd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, w.efd, &ev) != 0)
		return -errno;
	/* Signals stay blocked in it (the mask is inherited): the loop's signalfd takes them. */
	ret = pthread_create(&w.thread, NULL, writer_main, NULL);
	if (ret)
		return -ret;
	w.running = true;
	return 0;
}

/* Runs the done callbacks of finished jobs (on the loop's thread). */
void hd_writer_event(void)
{
	struct hd_wjob *list, *next;
	uint64_t v;

	if (read(w.efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: taken with an earlier event */
	}
	pthread_mutex_lock(&w.lock);
	list = w.done;
	w.done = NULL;
	w.done_tail = &w.done;
	pthread_mutex_unlock(&w.lock);
	for (; list; list = next) {
		next = list->next;
		list->done(list);
	}
}

void hd_writer_run(struct hd_wjob *j)
{
	atomic_store(&j->cancel, false);
	j->next = NULL;
	j->cut = false;
	while (j->step(j, UINT64_MAX / 2))
		;
	j->done(j);
}

void hd_writer_submit(struct hd_wjob *j)
{
	struct uidq *q, **tail;

	if (!w.running) {
		hd_writer_run(j);
		return;
	}
	atomic_store(&j->cancel, false);
	j->next = NULL;
	j->cut = false;
	pthread_mutex_lock(&w.lock);
	for (q = w.queues; q && q->uid != j->uid; q = q->next)
		;
	if (!q && (q = calloc(1, sizeof(*q)))) {
		q->uid = j->uid;
		for (tail = &w.queues; *tail; tail = &(*tail)->next)
			;
		*tail = q;
	}
	if (!q) {
		/* No memory for a queue: in line, as before the thread. */
		pthread_mutex_unlock(&w.lock);
		hd_writer_run(j);
		return;
	}
	if (q->tail && q->head)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	w.queued++;
	pthread_cond_signal(&w.cond);
	pthread_mutex_unlock(&w.lock);
}

void hd_writer_cancel(struct hd_wjob *j)
{
	atomic_store(&j->cancel, true);
}

unsigned hd_writer_queued(void)
{
	unsigned n;

	if (!w.running)
		return 0;
	pthread_mutex_lock(&w.lock);
	n = w.queued;
	pthread_mutex_unlock(&w.lock);
	return n;
}

void hd_writer_stop(void)
{
	if (!w.running)
		return;
	pthread_mutex_lock(&w.lock);
	/* Registrations end at their next slice, removals run to their end. */
	for (struct uidq *q = w.queues; q; q = q->next)
		for (struct hd_wjob *j = q->head; j; j = j->next)
			if (j->stop_cancels)
				atomic_store(&j->cancel, true);
	w.stopping = true;
	pthread_cond_signal(&w.cond);
	pthread_mutex_unlock(&w.lock);
	pthread_join(w.thread, NULL);
	w.running = false;
	hd_writer_event();
}
