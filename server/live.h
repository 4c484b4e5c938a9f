/* live.h - the served index: validated at start, watched for replacement, swapped in when a new
 * file passes validation, and read through one engine per worker thread. */
#ifndef ATLAS_LIVE_H
#define ATLAS_LIVE_H

#include "engine.h"

typedef struct live live;

/* What /healthz and /metrics report about the served index (a copy, taken under the state lock). */
typedef struct live_info {
	char build_id[64];
	char built_at[64];
	long long built_at_unix;
	int pages;
	int kept_pages;              /* pages kept from the previous index (meta kept_pages) */
	int schema_version;
	unsigned long generation;    /* 1 for the index served at start, +1 per swap */
	unsigned long swaps;         /* successful swaps */
	unsigned long refused;       /* changed files that failed validation */
	char last_swap_error[512];   /* why the last changed file was refused; "" after a swap */
	unsigned long warm_misses;   /* requests that waited for the shared engine (more threads
					than warm engines) */
} live_info;

/* Called by the watcher thread after each successful swap (the server empties its cache). */
typedef void (*live_swap_fn)(void *cls);

/* Validates the index at path (opens an engine, runs one search) and keeps that engine as the
 * engine of one worker, then opens and warms an engine for each of the other workers - 1 threads
 * (as every swap does before it publishes a new generation). On success *out owns the live index; on failure *out is
 * NULL and err says why. */
int live_open(live **out, const char *path, int workers, live_swap_fn on_swap, void *cls,
	      atlas_error *err);

/* Starts the watcher thread, which stats the path every 500 ms. Returns 0, or ATLAS_ENOMEM with err
 * set when the thread cannot be started. */
int live_start(live *l, atlas_error *err);

/* Asks the watcher to check the path now (SIGHUP). Safe from any thread; never fails. */
void live_kick(live *l);

/* Stops and joins the watcher thread. Accepts a live index whose watcher was never started. */
void live_stop(live *l);

/* Frees the live index; no worker may hold an engine any more (the watcher is stopped here).
 * Accepts NULL. */
void live_free(live *l);

/* Returns the engine the calling thread answers with, taking a warm engine of the current
 * generation when its own is older (never opening one). Never NULL: when the thread has no engine
 * of the current generation it gets the shared engine, locked until live_release. Every call must
 * be paired with live_release. */
atlas_engine *live_acquire(live *l);

/* Ends the use of e, returned by live_acquire (unlocks the shared engine when it was that). */
void live_release(live *l, atlas_engine *e);

/* Copies the state of the served index into *out. Never fails. */
void live_info_get(live *l, live_info *out);

#endif
