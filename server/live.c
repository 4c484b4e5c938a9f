/* live.c - the served index: validation, the watcher thread and hot swap, per-thread engines.
 * Every engine a worker answers with is opened and warmed by the watcher (or at start), off the
 * request path: a worker whose engine is of an older generation takes a warm one, never opens
 * one itself, and the engine it leaves is freed by the watcher. */
#include "live.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define WATCH_INTERVAL_MS 500
#define SPARES_MAX 64             /* warm engines made per generation, at most */
#define GRAVE_MAX 64              /* engines left by workers, freed by the watcher */

/* The identity of the file at the index path, as stat(2) saw it. */
typedef struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	bool present;
} file_id;

/* A worker thread's engine, kept through a pthread key so that it is freed when the thread
 * exits. */
typedef struct local {
	pthread_mutex_t lock;     /* held by its thread from acquire to release */
	atlas_engine *e;          /* NULL when the thread could not open one of gen */
	unsigned long gen;        /* the generation e (or the failed attempt) belongs to */
	struct live *owner;
	struct local *next;       /* in owner->locals */
} local;

struct live {
	char *path;
	live_swap_fn on_swap;
	void *cls;
	pthread_key_t key;        /* -> local */
	pthread_mutex_t locals_lock;
	local *locals;            /* every thread's local, so a swap can drop idle threads' engines */

	/* the engine that validated the served index: used by threads without their own engine */
	pthread_mutex_t shared_lock;
	atlas_engine *shared;

	/* what is served: generation, info; readers copy under state_lock */
	pthread_mutex_t state_lock;
	atomic_ulong generation;
	live_info info;

	/* the watcher */
	pthread_mutex_t wake_lock;
	pthread_cond_t wake;
	bool kicked, stopping, started;
	pthread_t thread;
	file_id seen;             /* the file last looked at (good or refused) */
	/* warm engines of generation spare_gen, for the workers; engines workers left behind */
	int workers;
	pthread_mutex_t spare_lock;
	atlas_engine *spares[SPARES_MAX];
	int nspares;
	unsigned long spare_gen;
	atlas_engine *grave[GRAVE_MAX];
	int ngrave;
	atomic_ulong warm_misses;  /* acquires that found no warm engine of their generation */
};

/* Writes a timestamped, printf-style event line to stderr (swaps, refusals). */
static void event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void event(const char *fmt, ...)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s atlas-serve: %s\n", when, line);
}

/* Copies the string src into dst (cap bytes), cut short when longer. */
static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Fills *id from stat(path); id->present is false when the file cannot be stat'ed. */
static void file_id_get(file_id *id, const char *path)
{
	struct stat st;
	memset(id, 0, sizeof(*id));
	if (stat(path, &st))
		return;
	id->present = true;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
}

/* Returns whether two identities name the same, unchanged file. */
static bool file_id_same(const file_id *a, const file_id *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Opens an engine on path and runs one search with it. Returns 0 with *out owning the engine, or
 * the engine's error code with err set (and *out NULL). */
static int validate(atlas_engine **out, const char *path, atlas_error *err)
{
	atlas_engine *e = NULL;
	*out = NULL;
	int rc = atlas_engine_open(&e, path, err);
	if (rc)
		return rc;
	if ((rc = atlas_engine_verify(e, err)))
		goto close_engine;
	if (atlas_engine_ndocs(e) < 1 || !atlas_engine_meta(e, ATLAS_META_BUILD_ID)) {
		rc = atlas_error_set(err, ATLAS_ESCHEMA, "%s: no pages or no build id in the index",
				     path);
		goto close_engine;
	}
	atlas_search_params p = { atlas_engine_doc(e, 0)->title, 1, 0, NULL, NULL, false, false };
	atlas_results r;
	rc = atlas_search(&r, e, &p, err);
	if (rc)
		goto close_engine;
	atlas_results_free(&r);
	/* the postings are read here, by the watcher, once for every thread's engine of this file */
	atlas_error perr = { 0, "" };
	if (atlas_engine_hold_postings(e, &perr))
		event("%s: searching through FTS5: %s", path, perr.msg);
	*out = e;
	return 0;
close_engine:
	atlas_engine_free(e);
	return rc;
}

/* Opens an engine on path for build and warms it as a worker's first request would: its postings
 * held (shared by the engines of one file) and one search. Returns the engine, or NULL when the file is
 * no longer that build or cannot be opened. */
static atlas_engine *warm_engine(const char *path, const char *build)
{
	atlas_engine *e = NULL;
	atlas_error err = { 0, "" };
	if (atlas_engine_open(&e, path, &err))
		return NULL;
	const char *b = atlas_engine_meta(e, ATLAS_META_BUILD_ID);
	if (!b || strcmp(b, build) != 0 || atlas_engine_ndocs(e) < 1) {
		atlas_engine_free(e);
		return NULL;
	}
	if (atlas_engine_hold_postings(e, &err))
		event("%s: searching through FTS5: %s", path, err.msg);
	const atlas_doc *d = atlas_engine_doc(e, 0);
	atlas_search_params p = { d->title, 10, 0, NULL, NULL, false, false };
	atlas_results r;
	if (atlas_search(&r, e, &p, &err) == 0)
		atlas_results_free(&r);
	return e;
}

/* Makes the warm engines of generation gen (build) for all workers but one (which answers with
 * the validated, shared engine), replacing older ones (freed). Called by the watcher right after
 * it published gen, and at start before the server listens. */
static void make_spares(struct live *l, unsigned long gen, const char *build)
{
	atlas_engine *made[SPARES_MAX];
	int n = 0;
	/* one worker answers with the validated engine, warm too (the shared one) */
	int want = l->workers - 1 < SPARES_MAX ? l->workers - 1 : SPARES_MAX;
	/* stopped when the file changes again: the next look swaps that one in */
	file_id at;
	while (n < want) {
		file_id_get(&at, l->path);
		if (!file_id_same(&at, &l->seen) || !(made[n] = warm_engine(l->path, build)))
			break;
		n++;
	}
	atlas_engine *old[SPARES_MAX];
	pthread_mutex_lock(&l->spare_lock);
	int nold = l->nspares;
	memcpy(old, l->spares, sizeof(old[0]) * (size_t)nold);
	memcpy(l->spares, made, sizeof(made[0]) * (size_t)n);
	l->nspares = n;
	l->spare_gen = gen;
	pthread_mutex_unlock(&l->spare_lock);
	for (int i = 0; i < nold; i++)
		atlas_engine_free(old[i]);
}

/* Returns a warm engine of generation gen, taken from the spares, or NULL when none is left. */
static atlas_engine *take_spare(struct live *l, unsigned long gen)
{
	atlas_engine *e = NULL;
	pthread_mutex_lock(&l->spare_lock);
	if (l->spare_gen == gen && l->nspares > 0)
		e = l->spares[--l->nspares];
	pthread_mutex_unlock(&l->spare_lock);
	return e;
}

/* Hands engine e (may be NULL), left by a worker, to the watcher to free; frees it at once when
 * the watcher has GRAVE_MAX waiting already. */
static void bury(struct live *l, atlas_engine *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&l->spare_lock);
	bool kept = l->ngrave < GRAVE_MAX;
	if (kept)
		l->grave[l->ngrave++] = e;
	pthread_mutex_unlock(&l->spare_lock);
	if (!kept)
		atlas_engine_free(e);
}

/* Frees the engines workers left (the watcher, each look). Returns how many. */
static int empty_grave(struct live *l)
{
	atlas_engine *g[GRAVE_MAX];
	pthread_mutex_lock(&l->spare_lock);
	int n = l->ngrave;
	memcpy(g, l->grave, sizeof(g[0]) * (size_t)n);
	l->ngrave = 0;
	pthread_mutex_unlock(&l->spare_lock);
	for (int i = 0; i < n; i++)
		atlas_engine_free(g[i]);
	return n;
}

/* Copies meta key of e into buf ("" when absent). */
static void meta_copy(char *buf, size_t cap, const atlas_engine *e, const char *key)
{
	const char *v = atlas_engine_meta(e, key);
	copy_str(buf, cap, v ? v : "");
}

/* Fills the index fields of info from the meta table of e; state_lock held by the caller. */
static void info_from_engine(live_info *info, const atlas_engine *e)
{
	const char *v;
	meta_copy(info->build_id, sizeof(info->build_id), e, ATLAS_META_BUILD_ID);
	meta_copy(info->built_at, sizeof(info->built_at), e, ATLAS_META_BUILT_AT);
	v = atlas_engine_meta(e, ATLAS_META_BUILT_AT_UNIX);
	info->built_at_unix = v ? atoll(v) : 0;
	v = atlas_engine_meta(e, ATLAS_META_PAGES);
	info->pages = v ? atoi(v) : atlas_engine_ndocs(e);
	v = atlas_engine_meta(e, ATLAS_META_SCHEMA_VERSION);
	info->schema_version = v ? atoi(v) : 0;
	v = atlas_engine_meta(e, ATLAS_META_KEPT_PAGES);
	info->kept_pages = v ? atoi(v) : 0;
}

/* The pthread key destructor: frees a worker's engine when its thread exits. */
static void local_free(void *p)
{
	local *loc = p;
	live *l = loc->owner;
	pthread_mutex_lock(&l->locals_lock);
	for (local **pp = &l->locals; *pp; pp = &(*pp)->next)
		if (*pp == loc) {
			*pp = loc->next;
			break;
		}
	pthread_mutex_unlock(&l->locals_lock);
	atlas_engine_free(loc->e);
	pthread_mutex_destroy(&loc->lock);
	free(loc);
}

/* After a swap: gives the threads that are idle and still hold an older build a warm engine of
 * gen, freeing theirs, so the old build's memory goes now and their next request finds its engine
 * ready. Busy threads take a warm engine at their next request. */
static void drop_stale(live *l, unsigned long gen)
{
	pthread_mutex_lock(&l->locals_lock);
	for (local *loc = l->locals; loc; loc = loc->next) {
		if (pthread_mutex_trylock(&loc->lock) != 0)
			continue;
		if (loc->gen != gen) {
			atlas_engine_free(loc->e);
			loc->e = take_spare(l, gen);
			loc->gen = loc->e ? gen : 0; /* no generation: the next acquire looks again */
		}
		pthread_mutex_unlock(&loc->lock);
	}
	pthread_mutex_unlock(&l->locals_lock);
}

/* Validates path and sets up the live index; see live.h. Returns 0 or an ATLAS_E* code. */
int live_open(live **out, const char *path, int workers, live_swap_fn on_swap, void *cls,
	      atlas_error *err)
{
	*out = NULL;
	live *l = calloc(1, sizeof(*l));
	if (!l)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	int rc = ATLAS_ENOMEM;
	l->path = strdup(path);
	if (!l->path) {
		atlas_error_set(err, rc, "out of memory");
		goto free_live;
	}
	file_id_get(&l->seen, path);
	rc = validate(&l->shared, path, err);
	if (rc)
		goto free_path;
	rc = ATLAS_ENOMEM;
	if (pthread_key_create(&l->key, local_free)) {
		atlas_error_set(err, rc, "cannot create thread-local storage");
		goto free_engine;
	}
	if (pthread_mutex_init(&l->shared_lock, NULL) || pthread_mutex_init(&l->state_lock, NULL) ||
	    pthread_mutex_init(&l->locals_lock, NULL) || pthread_mutex_init(&l->spare_lock, NULL) ||
	    pthread_mutex_init(&l->wake_lock, NULL) || pthread_cond_init(&l->wake, NULL)) {
		atlas_error_set(err, rc, "cannot create locks");
		goto delete_key;
	}
	l->on_swap = on_swap;
	l->cls = cls;
	info_from_engine(&l->info, l->shared);
	l->info.generation = 1;
	atomic_store(&l->generation, 1);
	atomic_init(&l->warm_misses, 0);
	l->workers = workers > 0 ? workers : 1;
	/* the workers' engines, warm before the server listens (so before /healthz answers) */
	make_spares(l, 1, l->info.build_id);
	*out = l;
	return 0;
delete_key:
	pthread_key_delete(l->key);
free_engine:
	atlas_engine_free(l->shared);
free_path:
	free(l->path);
free_live:
	free(l);
	return rc;
}

/* Records a refused file in the state and logs it. */
static void refuse(live *l, const char *why)
{
	pthread_mutex_lock(&l->state_lock);
	l->info.refused++;
	copy_str(l->info.last_swap_error, sizeof(l->info.last_swap_error), why);
	pthread_mutex_unlock(&l->state_lock);
	malloc_trim(0); /* the refused file's copy is gone: give its memory back */
	event("index swap refused, still serving the previous index: %s", why);
}

/* One look at the index path: validates a changed file and swaps it in, or refuses it. */
static void check(live *l)
{
	file_id now;
	file_id_get(&now, l->path);
	if (file_id_same(&now, &l->seen))
		return;
	l->seen = now;
	if (!now.present) {
		char why[sizeof(l->info.last_swap_error)];
		const char *reason = strerror(errno);
		copy_str(why, sizeof(why), l->path);
		size_t n = strlen(why);
		if (n + 3 < sizeof(why)) {
			memcpy(why + n, ": ", 2);
			copy_str(why + n + 2, sizeof(why) - n - 2, reason);
		}
		refuse(l, why);
		return;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atlas_engine *e = NULL;
	atlas_error err = { 0, "" };
	if (validate(&e, l->path, &err)) {
		refuse(l, err.msg);
		return;
	}
	struct timespec tv;
	clock_gettime(CLOCK_MONOTONIC, &tv);
	pthread_mutex_lock(&l->shared_lock);
	atlas_engine *old = l->shared;
	l->shared = e;
	pthread_mutex_unlock(&l->shared_lock);
	char build[64];
	pthread_mutex_lock(&l->state_lock);
	info_from_engine(&l->info, e);
	l->info.generation++;
	l->info.swaps++;
	l->info.last_swap_error[0] = '\0';
	atomic_store(&l->generation, l->info.generation);
	copy_str(build, sizeof(build), l->info.build_id);
	pthread_mutex_unlock(&l->state_lock);
	atlas_engine_free(old);
	/* the workers answer with the validated engine, warm, until their own warm engines are
	 * made here: a worker never opens one */
	unsigned long gen = atomic_load(&l->generation);
	make_spares(l, gen, build);
	drop_stale(l, gen);
	empty_grave(l);
	malloc_trim(0);
	if (l->on_swap)
		l->on_swap(l->cls);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	event("index swapped: now serving build %s from %s (validated in %.0f ms, warmed in %.0f ms)",
	      build, l->path, (double)(tv.tv_sec - t0.tv_sec) * 1e3 + (tv.tv_nsec - t0.tv_nsec) / 1e6,
	      (double)(t1.tv_sec - tv.tv_sec) * 1e3 + (t1.tv_nsec - tv.tv_nsec) / 1e6);
}

/* The watcher thread: checks the path every WATCH_INTERVAL_MS, or at once when kicked. */
static void *watch(void *arg)
{
	live *l = arg;
	pthread_mutex_lock(&l->wake_lock);
	while (!l->stopping) {
		if (!l->kicked) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += WATCH_INTERVAL_MS * 1000000L;
			until.tv_sec += until.tv_nsec / 1000000000L;
			until.tv_nsec %= 1000000000L;
			pthread_cond_timedwait(&l->wake, &l->wake_lock, &until);
		}
		if (l->stopping)
			break;
		l->kicked = false;
		pthread_mutex_unlock(&l->wake_lock);
		if (empty_grave(l))
			malloc_trim(0); /* the old engines' memory back, so swaps do not ratchet RSS up */
		check(l);
		pthread_mutex_lock(&l->wake_lock);
	}
	pthread_mutex_unlock(&l->wake_lock);
	return NULL;
}

/* Starts the watcher. Returns 0 or ATLAS_ENOMEM with err set. */
int live_start(live *l, atlas_error *err)
{
	int rc = pthread_create(&l->thread, NULL, watch, l);
	if (rc)
		return atlas_error_set(err, ATLAS_ENOMEM, "cannot start the index watcher: %s",
				       strerror(rc));
	l->started = true;
	return 0;
}

/* Wakes the watcher for an immediate check. Never fails. */
void live_kick(live *l)
{
	pthread_mutex_lock(&l->wake_lock);
	l->kicked = true;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->wake_lock);
}

/* Stops and joins the watcher. Never fails. */
void live_stop(live *l)
{
	if (!l->started)
		return;
	pthread_mutex_lock(&l->wake_lock);
	l->stopping = true;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->wake_lock);
	pthread_join(l->thread, NULL);
	l->started = false;
}

/* Frees the live index; see live.h. Accepts NULL. */
void live_free(live *l)
{
	if (!l)
		return;
	live_stop(l);
	/* the calling thread's engine, if it ever acquired one (the key's destructor does not run
	 * for it) */
	local *loc = pthread_getspecific(l->key);
	if (loc)
		local_free(loc);
	pthread_key_delete(l->key);
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->wake_lock);
	pthread_mutex_destroy(&l->locals_lock);
	pthread_mutex_destroy(&l->state_lock);
	empty_grave(l);
	for (int i = 0; i < l->nspares; i++)
		atlas_engine_free(l->spares[i]);
	pthread_mutex_destroy(&l->spare_lock);
	pthread_mutex_destroy(&l->shared_lock);
	atlas_engine_free(l->shared);
	free(l->path);
	free(l);
}

/* Moves the calling thread to the current generation: it takes a warm engine of it (made by the
 * watcher before the generation was published) and leaves its old engine to the watcher; nothing
 * is opened or freed here, on the request path. With no warm engine (the watcher makes them
 * right after it publishes the generation, one fewer than there are workers) the thread answers
 * with the shared engine, the validated one, warm too, and takes its own once it is made. */
static void reopen(live *l, local *loc)
{
	unsigned long gen = atomic_load_explicit(&l->generation, memory_order_acquire);
	atlas_engine *e = take_spare(l, gen);
	bury(l, loc->e);
	loc->e = e;
	loc->gen = gen;
}

/* Returns the engine for the calling thread; see live.h. Never NULL. */
atlas_engine *live_acquire(live *l)
{
	local *loc = pthread_getspecific(l->key);
	if (!loc) {
		loc = calloc(1, sizeof(*loc));
		if (loc && pthread_mutex_init(&loc->lock, NULL)) {
			free(loc);
			loc = NULL;
		}
		if (loc && pthread_setspecific(l->key, loc)) {
			pthread_mutex_destroy(&loc->lock);
			free(loc);
			loc = NULL;
		}
		if (loc) {
			loc->owner = l;
			pthread_mutex_lock(&l->locals_lock);
			loc->next = l->locals;
			l->locals = loc;
			pthread_mutex_unlock(&l->locals_lock);
		}
	}
	if (loc) {
		pthread_mutex_lock(&loc->lock);
		if (loc->gen != atomic_load_explicit(&l->generation, memory_order_acquire))
			reopen(l, loc);
		else if (!loc->e)
			loc->e = take_spare(l, loc->gen); /* made since the thread moved */
		if (loc->e)
			return loc->e; /* loc->lock stays held until live_release */
		pthread_mutex_unlock(&loc->lock);
	}
	/* the validated engine, warm: one worker's own; a wait for it means more threads than
	 * warm engines */
	if (pthread_mutex_trylock(&l->shared_lock) != 0) {
		atomic_fetch_add(&l->warm_misses, 1);
		pthread_mutex_lock(&l->shared_lock);
	}
	return l->shared;
}

/* Ends a use begun by live_acquire. Never fails. */
void live_release(live *l, atlas_engine *e)
{
	local *loc = pthread_getspecific(l->key);
	if (loc && loc->e == e)
		pthread_mutex_unlock(&loc->lock);
	else
		pthread_mutex_unlock(&l->shared_lock);
}

/* Copies the served index's state. Never fails. */
void live_info_get(live *l, live_info *out)
{
	pthread_mutex_lock(&l->state_lock);
	*out = l->info;
	pthread_mutex_unlock(&l->state_lock);
	out->warm_misses = atomic_load(&l->warm_misses);
}
