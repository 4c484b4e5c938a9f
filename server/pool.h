/* pool.h - the search workers: engine requests queued by the HTTP threads and taken by whichever
 * worker is free, the clients in turn (one request of each client with requests waiting, then
 * the next of each), so that a client with many requests queued delays another's by one. */
#ifndef ATLAS_POOL_H
#define ATLAS_POOL_H

#include <stdbool.h>

#define POOL_KEY_MAX 48

/* A queued job, embedded in the caller's own structure (the pool allocates per client with jobs
 * waiting, never per job). */
typedef struct pool_job {
	struct pool_job *next;
	char key[POOL_KEY_MAX];      /* the client whose turn it waits for ("" and any: one client) */
} pool_job;

/* Runs one job on a worker thread; owns nothing of the pool. */
typedef void (*pool_fn)(pool_job *job, void *cls);

typedef struct pool pool;

/* Starts n worker threads (1..1024) calling fn(job, cls) for each job submitted. On success *out
 * owns the pool (pool_stop frees it); returns 0, or ATLAS_ENOMEM when a thread or the pool cannot
 * be made (nothing left running). */
int pool_start(pool **out, int n, pool_fn fn, void *cls);

/* Queues job (owned by the caller until fn has run on it); once the pool is stopping, runs it on
 * the calling thread instead. Never fails. */
void pool_submit(pool *p, pool_job *job);

/* Returns the jobs queued and not yet taken by a worker. */
long pool_queued(pool *p);

/* Runs the jobs still queued, then stops and joins the workers; later submissions run inline.
 * Accepts NULL and a stopped pool. */
void pool_stop(pool *p);

/* Frees a stopped pool (pool_stop is called when it was not). Accepts NULL. */
void pool_free(pool *p);

#endif
