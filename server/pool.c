/* pool.c - the search workers: a FIFO of jobs under one mutex, and threads that take them. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "error.h"
#include "pool.h"

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t ready;        /* signalled when a job is queued or the pool stops */
	pool_job *head, *tail;       /* the queue, oldest first */
	long queued;
	bool stopping;
	bool joined;                 /* the workers have been joined */
	pool_fn fn;
	void *cls;
	int nthreads;
	pthread_t threads[];
};

/* A worker: takes the oldest job, runs it, until the pool stops with an empty queue. */
static void *worker(void *arg)
{
	pool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stopping)
			pthread_cond_wait(&p->ready, &p->lock);
		pool_job *j = p->head;
		if (!j)
			break;
		p->head = j->next;
		if (!p->head)
			p->tail = NULL;
		p->queued--;
		pthread_mutex_unlock(&p->lock);
		j->next = NULL;
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

void pool_submit(pool *p, pool_job *job)
{
	job->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->stopping) {
		pthread_mutex_unlock(&p->lock);
		p->fn(job, p->cls);
		return;
	}
	if (p->tail)
		p->tail->next = job;
	else
		p->head = job;
	p->tail = job;
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
