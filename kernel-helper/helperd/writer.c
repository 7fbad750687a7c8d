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
 * never for another user's 12,000-site file to be done. And a bulk slice
 * is short when another uid's job waits (YIELD_SLICE_NS: a batch of a
 * line or a few), and cut at its next batch when one comes during it
 * (lane.yield, which the tracefs layer reads between batches: a write()
 * under way cannot be cut); so another uid's job waits about one batch
 * per turn (issue 33, item 5: a small job of another uid waited 174 ms
 * p50 for its first slice before, 33 to 53 ms after, at load 10 to 13;
 * the rest is the kernel's event_mutex, which one line's write() may
 * wait for: bench/helper/README.md). --test-timing counts the slices
 * each job waited for; t-sec-load-fair checks it is at most one.
 *
 * Before the thread starts (start-up recovery and scan) and after it
 * stopped (SIGTERM), a job runs in line to its end, its `done` called
 * before hd_writer_submit returns.
 *
 * The checker. A second thread, run the same way (jobs in per-uid turns,
 * done on the loop) but writing nothing: it checks what a parse worker
 * answered (worker_answer.c: every count and string bounded, every site's
 * bytes read again in the file), which grows with the sites (21 million
 * instructions for a 12,000-site file) and must not hold the loop either.
 * A job says which thread takes it (hd_wjob.lane); the lanes share the list
 * of ended jobs and the eventfd.
 *
 * The lister. A third lane, the same again, reads /proc for LIST
 * (list.c): root's LIST of every process reads every process's maps, tens
 * of milliseconds on a loaded machine, and a REGISTER that came meanwhile
 * waited behind it (bench/helper/README.md). Its jobs touch only a
 * snapshot of the model and what they collect; done hands it to the loop.
 *
 * Bulk work yields. A job that grows with thousands of sites (hd_wjob.bulk:
 * a 12,000-site file's writes or check) runs with its thread at nice
 * BULK_NICE, every other at the daemon's own priority: on a busy machine the
 * loop, which answers everyone, and the small jobs of other users win the
 * CPU against one user's bulk work, which still advances (a nice value, not
 * SCHED_IDLE, which other tenants' load could starve for good, holding the
 * job's uid and, inside the kernel, tracefs' lock meanwhile). Setting the
 * thread back to nice 0 needs CAP_SYS_NICE or RLIMIT_NICE (the unit's
 * LimitNICE=+0); without either the thread stays niced after its first bulk
 * job (logged once). And since the other jobs wait for the slice under
 * way, a bulk slice is niced only while no other uid's job is queued, and
 * a job of another uid submitted during one sets the thread back at once
 * (priority inheritance, by hand: niced inside a write() on a busy
 * machine, a slice took seconds, and every other user's new file waited
 * that long: bench/helper/README.md).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "helperd.h"

/* A turn of one uid: the time another uid's work may wait per uid with work queued. */
#define SLICE_NS (20ull * 1000 * 1000)
/*
 * A bulk job's turn while another uid's job waits: about one batch of a
 * line or a few (the batches are sized from the kernel's cost per line),
 * so the other job waits one such batch per turn, not 20 ms of them.
 */
#define YIELD_SLICE_NS (2ull * 1000 * 1000)
#define BULK_NICE 10
static int bulk_nice = BULK_NICE; /* --test-bulk-nice */

void hd_writer_bulk_nice(int n)
{
	bulk_nice = n < 0 ? 0 : n > 19 ? 19 : n;
}

struct uidq {
	struct uidq *next;
	uid_t uid;
	struct hd_wjob *head, *tail;
};

struct lane {
	const char *name;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool running, stopping;
	struct uidq *queues; /* uids with jobs, in turn order */
	uid_t last_uid;	     /* the uid served last (when served) */
	bool served;
	unsigned queued;
	int base, nice;	      /* the thread's nice value: at its start, as last set */
	pid_t tid;	      /* the thread's (for the loop's boost) */
	uid_t cur_uid;	      /* whose job the thread runs (under lock) */
	bool cur_bulk;	      /* and whether it is bulk work */
	unsigned long slices; /* run so far (--test-timing) */
	atomic_bool
	    yield; /* another uid's job came during a bulk slice: it ends at its next batch */
	bool nice_warned;
};

static struct lane lanes[HD_LANES] = {{.name = "writer"}, {.name = "checker"}, {.name = "lister"}};

/* The jobs ended, for the loop; the eventfd in the epoll set. */
static struct {
	enum hd_tag tag; /* HD_TAG_WRITER: epoll data points here */
	pthread_mutex_t lock;
	int efd;
	struct hd_wjob *done, **done_tail;
} w = {.tag = HD_TAG_WRITER, .lock = PTHREAD_MUTEX_INITIALIZER, .efd = -1};

/*
 * The head job of the uid after the one served last (the first uid when
 * that one has no queue any more). Computed at each pick, not kept as a
 * pointer to the next queue: a uid whose queue was made during the last
 * slice, at the end of the list, would be passed over for one more turn of
 * the same uid.
 */
static struct hd_wjob *pick(struct lane *l)
{
	struct uidq *q = l->queues;

	if (l->served)
		for (struct uidq *o = l->queues; o; o = o->next)
			if (o->uid == l->last_uid) {
				q = o->next;
				break;
			}
	for (; q && !q->head; q = q->next)
		;
	if (!q)
		for (q = l->queues; q && !q->head; q = q->next)
			;
	if (!q)
		return NULL;
	l->last_uid = q->uid;
	l->served = true;
	return q->head;
}

/* j out of its lane (under l->lock), onto the list of ended jobs. */
static void finish(struct lane *l, struct hd_wjob *j)
{
	struct uidq **pp = &l->queues;

	while (*pp && (*pp)->uid != j->uid)
		pp = &(*pp)->next;
	if (*pp) {
		struct uidq *q = *pp;

		q->head = j->next;
		if (!q->head) {
			*pp = q->next;
			free(q);
		}
	}
	l->queued--;
	j->next = NULL;
	pthread_mutex_lock(&w.lock);
	*w.done_tail = j;
	w.done_tail = &j->next;
	pthread_mutex_unlock(&w.lock);
}

/* The thread's nice value set to want (tid 0: the calling thread), under l->lock. */
static void renice(struct lane *l, pid_t tid, int want)
{
	if (l->nice == want)
		return;
	/* (Linux: a thread's nice value is its own; PRIO_PROCESS takes a thread id.) */
	if (setpriority(PRIO_PROCESS, (id_t)tid, want) == 0) {
		l->nice = want;
	} else if (!l->nice_warned) {
		l->nice_warned = true;
		hd_dbg("%s thread: nice %d: %s (stays at %d)", l->name, want, strerror(errno),
		       l->nice);
	}
}

/* Whether a uid other than uid has a job queued (under l->lock). */
static bool others_wait(const struct lane *l, uid_t uid)
{
	for (const struct uidq *q = l->queues; q; q = q->next)
		if (q->uid != uid && q->head)
			return true;
	return false;
}

static void *lane_main(void *arg)
{
	struct lane *l = arg;

	/* The lister answers as the loop does; the writer and the checker at nice 0 (loop.c). */
	int sched = hd_sched_self(l == &lanes[HD_LANE_LIST]);

	if (sched)
		hd_dbg("%s thread's scheduling: %s", l->name, strerror(-sched));
	pthread_mutex_lock(&l->lock);
	l->tid = gettid();
	errno = 0;
	l->base = getpriority(PRIO_PROCESS, 0);
	if (l->base == -1 && errno)
		l->base = 0;
	l->nice = l->base;
	for (;;) {
		struct hd_wjob *j = pick(l);
		bool more, waited;
		uint64_t t0;

		if (!j) {
			if (l->stopping)
				break;
			pthread_cond_wait(&l->cond, &l->lock);
			continue;
		}
		l->cur_uid = j->uid;
		l->cur_bulk = j->bulk;
		atomic_store(&l->yield, false);
		/*
		 * Niced only while no other uid's work waits for this slice, and
		 * then a short one (the head comment).
		 */
		waited = j->bulk && others_wait(l, j->uid);
		renice(l, 0, j->bulk && !waited ? l->base + bulk_nice : l->base);
		if (hd_timing && !j->t_first) {
			j->t_first = hd_timing_now();
			j->t_slices = l->slices - j->t_slices; /* run while it waited */
		}
		pthread_mutex_unlock(&l->lock);
		j->cut = atomic_load(&j->cancel);
		t0 = hd_timing_now();
		more = !j->cut && j->step(j, waited ? YIELD_SLICE_NS : SLICE_NS);
		j->t_last = hd_timing_now();
		if (j->bulk && l == &lanes[HD_LANE_WRITE] && (waited || atomic_load(&l->yield)))
			hd_timing_put(HD_ST_BULK_SLICE, j->uid, t0, j->t_last);
		pthread_mutex_lock(&l->lock);
		l->slices++;
		if (!more) {
			uint64_t one = 1;

			finish(l, j);
			if (write(w.efd, &one, sizeof(one)) < 0) {
				/* (an eventfd's counter cannot overflow here) */
			}
		}
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* The writer thread's own name, for profiles (bench/helper/loopcost.sh counts it apart). */
static void *writer_main(void *arg)
{
	return lane_main(arg);
}

static void *checker_main(void *arg)
{
	return lane_main(arg);
}

static void *lister_main(void *arg)
{
	return lane_main(arg);
}

int hd_writer_start(int epfd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &w};
	void *(*fn[HD_LANES])(void *) = {writer_main, checker_main, lister_main};
	int ret;

	w.done_tail = &w.done;
	/* A bulk slice of writing ends at its next batch when another uid's job comes. */
	if (hd_tracefs)
		hd_tracefs->yield = &lanes[HD_LANE_WRITE].yield;
	w.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w.efd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, w.efd, &ev) != 0)
		return -errno;
	for (int i = 0; i < HD_LANES; i++) {
		struct lane *l = &lanes[i];

		pthread_mutex_init(&l->lock, NULL);
		pthread_cond_init(&l->cond, NULL);
		/* Signals stay blocked in it (the mask is inherited): the loop's signalfd takes
		 * them. */
		ret = pthread_create(&l->thread, NULL, fn[i], l);
		if (ret)
			return -ret;
		l->running = true;
	}
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
		if (list->t_first && list->lane == HD_LANE_LIST) {
			hd_timing_put(HD_ST_LIST_WAIT, list->uid, list->t_queued, list->t_first);
			hd_timing_put(HD_ST_LIST_READ, list->uid, list->t_first, list->t_last);
		} else if (list->t_first && list->lane == HD_LANE_WRITE && !list->bulk) {
			if (list->t_alone) {
				hd_timing_put(HD_ST_WRITER_WAIT, list->uid, list->t_queued,
					      list->t_first);
				hd_timing_count(HD_ST_WRITER_SLICES, list->uid, list->t_slices);
			}
			hd_timing_put(HD_ST_WRITER_RUN, list->uid, list->t_first, list->t_last);
			hd_timing_put(HD_ST_WRITER_DONE, list->uid, list->t_last, hd_timing_now());
		}
		list->done(list);
	}
}

bool hd_writer_running(unsigned lane)
{
	return lane < HD_LANES && lanes[lane].running;
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
	struct lane *l = &lanes[j->lane < HD_LANES ? j->lane : 0];
	struct uidq *q, **tail;

	if (!l->running) {
		hd_writer_run(j);
		return;
	}
	atomic_store(&j->cancel, false);
	j->next = NULL;
	j->cut = false;
	j->t_queued = hd_timing_now();
	j->t_first = j->t_last = 0;
	pthread_mutex_lock(&l->lock);
	for (q = l->queues; q && q->uid != j->uid; q = q->next)
		;
	if (!q && (q = calloc(1, sizeof(*q)))) {
		q->uid = j->uid;
		for (tail = &l->queues; *tail; tail = &(*tail)->next)
			;
		*tail = q;
	}
	if (!q) {
		/* No memory for a queue: in line, as before the thread. */
		pthread_mutex_unlock(&l->lock);
		hd_writer_run(j);
		return;
	}
	j->t_alone = !q->head;
	j->t_slices = l->slices;
	if (q->tail && q->head)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	l->queued++;
	/*
	 * Another uid's small job waits for a bulk slice: the slice goes on at
	 * the daemon's priority (the thread niced could hold it, and
	 * tracefs' lock with it, for seconds on a busy machine); the bulk
	 * job is niced again at its next slice.
	 */
	if (!j->bulk && l->tid && j->uid != l->cur_uid) {
		renice(l, l->tid, l->base);
		if (l->cur_bulk)
			atomic_store(&l->yield, true);
	}
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

void hd_writer_cancel(struct hd_wjob *j)
{
	atomic_store(&j->cancel, true);
}

unsigned hd_writer_queued(void)
{
	unsigned n = 0;

	/* (The lister's jobs change nothing of the model or tracefs: not counted.) */
	for (int i = 0; i < HD_LANE_LIST; i++) {
		struct lane *l = &lanes[i];

		if (!l->running)
			continue;
		pthread_mutex_lock(&l->lock);
		n += l->queued;
		pthread_mutex_unlock(&l->lock);
	}
	return n;
}

void hd_writer_stop(void)
{
	for (int i = 0; i < HD_LANES; i++) {
		struct lane *l = &lanes[i];

		if (!l->running)
			continue;
		pthread_mutex_lock(&l->lock);
		/* Registrations and checks end at their next slice, removals run to their end. */
		for (struct uidq *q = l->queues; q; q = q->next)
			for (struct hd_wjob *j = q->head; j; j = j->next)
				if (j->stop_cancels)
					atomic_store(&j->cancel, true);
		l->stopping = true;
		pthread_cond_signal(&l->cond);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->thread, NULL);
		l->running = false;
	}
	hd_writer_event();
}
