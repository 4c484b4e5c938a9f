/* pool.c - the search workers: a queue per client under one mutex, served in turn (one job of
 * each client with jobs waiting, oldest client first), and threads that take the jobs. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "pool.h"

/* The jobs one client has waiting, oldest first; a link in the ring of clients with jobs. */
typedef struct client_queue {
	struct client_queue *next;   /* the next client in turn */
	pool_job *head, *tail;
	char key[POOL_KEY_MAX];
} client_queue;

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t ready;        /* signalled when a job is queued or the pool stops */
	client_queue *first, *last;  /* the clients with jobs waiting, in turn */
	client_queue spare;          /* the queue of jobs whose client's queue could not be made */
	long queued;
	bool stopping;
	bool joined;                 /* the workers have been joined */
	pool_fn fn;
	void *cls;
	int nthreads;
	pthread_t threads[];
};

/* Takes the next job in turn (lock held): the oldest of the first client's, whose queue then goes
 * to the end of the ring (or is freed when empty). Returns NULL when nothing is queued. */
static pool_job *take(pool *p)
{
	client_queue *q = p->first;
	if (!q)
		return NULL;
	pool_job *j = q->head;
	q->head = j->next;
	if (!q->head)
		q->tail = NULL;
	p->first = q->next;
	if (!p->first)
		p->last = NULL;
	q->next = NULL;
	if (q->head) {
		if (p->last)
			p->last->next = q;
		else
			p->first = q;
		p->last = q;
	} else if (q != &p->spare) {
		free(q);
	}
	p->queued--;
	j->next = NULL;
	return j;
}

/* A worker: takes the next job in turn, runs it, until the pool stops with nothing queued. */
static void *worker(void *arg)
{
	pool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->first && !p->stopping)
			pthread_cond_wait(&p->ready, &p->lock);
		pool_job *j = take(p);
		if (!j)
			break;
		pthread_mutex_unlock(&p->lock);
		p->fn(j, p->cls);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int pool_start(pool **out, int n, pool_fn fn, void *cls)
{
	*out = NULL;
	if (n < 1 || n > 1024)
		return ATLAS_EINVAL;
	pool *p = calloc(1, sizeof(*p) + (size_t)n * sizeof(pthread_t));
	if (!p)
		return ATLAS_ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->ready, NULL);
	p->fn = fn;
	p->cls = cls;
	for (; p->nthreads < n; p->nthreads++)
		if (pthread_create(&p->threads[p->nthreads], NULL, worker, p)) {
			pool_free(p);
			return ATLAS_ENOMEM;
		}
	*out = p;
	return 0;
}

/* Returns the queue of key among the clients with jobs waiting (lock held), adding it at the end
 * of the ring when absent (the spare queue when it cannot be made). */
static client_queue *queue_of(pool *p, const char *key)
{
	for (client_queue *q = p->first; q; q = q->next)
		if (strcmp(q->key, key) == 0)
			return q;
	if (p->spare.head)
		return &p->spare; /* the spare queue is in the ring already */
	client_queue *q = calloc(1, sizeof(*q));
	if (!q)
		q = &p->spare;
	else
		snprintf(q->key, sizeof(q->key), "%s", key);
	if (p->last)
		p->last->next = q;
	else
		p->first = q;
	p->last = q;
	return q;
}

void pool_submit(pool *p, pool_job *job)
{
	job->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->stopping) {
		pthread_mutex_unlock(&p->lock);
		p->fn(job, p->cls);
		return;
	}
	client_queue *q = queue_of(p, job->key);
	if (q->tail)
		q->tail->next = job;
	else
		q->head = job;
	q->tail = job;
	p->queued++;
	pthread_cond_signal(&p->ready);
	pthread_mutex_unlock(&p->lock);
}

long pool_queued(pool *p)
{
	pthread_mutex_lock(&p->lock);
	long n = p->queued;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void pool_stop(pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->ready);
	bool join = !p->joined;
	p->joined = true;
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; join && i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
}

void pool_free(pool *p)
{
	if (!p)
		return;
	pool_stop(p);
	pthread_cond_destroy(&p->ready);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
