/* analytics.c - the analytics writer of atlas-serve: a bounded queue filled by request threads and
 * drained by one thread that settles searches and writes them and clicks to SQLite in batches. */
#include "analytics.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "schema.h"

#define PENDING_MAX 1024             /* searches waiting to settle; the oldest is written early */

enum { EV_SEARCH, EV_CORRECTION, EV_CLICK };

/* One queued event; its strings live in the same allocation, after it. */
typedef struct event {
	int kind;
	long long at;                /* unix seconds */
	double mono;                 /* CLOCK_MONOTONIC seconds, for settling */
	char qid[ANALYTICS_QID_LEN + 1];
	const char *text;            /* search: the query; correction: the corrected words; click: the path */
	const char *filters;         /* search only */
	size_t text_len;             /* strlen(text) */
	long results;
	double took_ms;
	int page;                    /* search: the page; click: the rank */
} event;

struct analytics {
	sqlite3 *db;
	sqlite3_stmt *ins_search, *ins_click, *ins_corr;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	event *queue[ANALYTICS_QUEUE_MAX];
	int head, len;
	bool stop;
	event *pending[PENDING_MAX];
	unsigned char pending_first[PENDING_MAX]; /* the first byte of each one's words */
	int npending;
	atomic_ulong written_searches, written_clicks, dropped, superseded;
	atomic_long queued;
};

static analytics *active;

/* Returns CLOCK_MONOTONIC in seconds. Never fails. */
static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Returns the analytics being recorded into, or NULL. */
analytics *analytics_active(void)
{
	return active;
}

/* Writes the 16-hex-digit id of (build_id, norm) into out. Never fails. */
void analytics_qid(char *out, const char *build_id, const char *norm, size_t norm_len)
{
	uint64_t h = cache_hash(build_id, strlen(build_id));
	h ^= cache_hash(norm, norm_len) * 0x9e3779b97f4a7c15ULL;
	snprintf(out, ANALYTICS_QID_LEN + 1, "%016llx", (unsigned long long)h);
}

/* Returns a malloc'd event of kind holding copies of text and filters (NULL allowed), or NULL
 * when out of memory. */
static event *event_new(int kind, const char *qid, const char *text, const char *filters)
{
	size_t tl = text ? strlen(text) + 1 : 0, fl = filters ? strlen(filters) + 1 : 0;
	event *e = malloc(sizeof(*e) + tl + fl);
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->at = (long long)time(NULL);
	e->mono = mono_now();
	snprintf(e->qid, sizeof(e->qid), "%s", qid ? qid : "");
	char *p = (char *)(e + 1);
	e->text = e->filters = "";
	if (tl) {
		memcpy(p, text, tl);
		e->text = p;
		e->text_len = tl - 1;
		p += tl;
	}
	if (fl) {
		memcpy(p, filters, fl);
		e->filters = p;
	}
	return e;
}

/* Puts e on the queue, or frees it and counts a drop when the queue is full. Never blocks on the
 * file: the lock is held only to store the pointer. */
static void enqueue(analytics *a, event *e)
{
	if (!e) {
		atomic_fetch_add(&a->dropped, 1);
		return;
	}
	pthread_mutex_lock(&a->mu);
	if (a->len == ANALYTICS_QUEUE_MAX || a->stop) {
		pthread_mutex_unlock(&a->mu);
		free(e);
		atomic_fetch_add(&a->dropped, 1);
		return;
	}
	a->queue[(a->head + a->len) % ANALYTICS_QUEUE_MAX] = e;
	a->len++;
	atomic_store(&a->queued, a->len);
	if (a->len == ANALYTICS_QUEUE_MAX / 4)
		pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

/* Queues a search row. Never fails (a drop is counted). */
void analytics_search(analytics *a, const analytics_search_row *row)
{
	event *e = event_new(EV_SEARCH, row->qid, row->query, row->filters);
	if (e) {
		e->results = row->results;
		e->took_ms = row->took_ms;
		e->page = row->page;
	}
	enqueue(a, e);
}

/* Queues the corrected words of qid. Never fails (a drop is counted). */
void analytics_correction(analytics *a, const char *qid, const char *corrected)
{
	enqueue(a, event_new(EV_CORRECTION, qid, corrected, NULL));
}

/* Queues a click. Never fails (a drop is counted). */
void analytics_click(analytics *a, const char *qid, const char *path, int rank)
{
	event *e = event_new(EV_CLICK, qid, path, NULL);
	if (e)
		e->page = rank;
	enqueue(a, e);
}

/* Returns whether one of a and b is a strict prefix of the other (their lengths la and lb). */
static bool prefix_related(const char *a, size_t la, const char *b, size_t lb)
{
	return la != lb && memcmp(a, b, la < lb ? la : lb) == 0;
}

/* Adds search e to the pending searches, dropping (as superseded) those it continues: typed within
 * ANALYTICS_SETTLE_S with the same filters and words that extend or shorten e's. When the pending
 * list is full its oldest goes to batch. */
static void settle_add(analytics *a, event *e, event **batch, int *nbatch)
{
	/* words in a prefix relation start with the same byte: memchr over the first bytes, kept
	 * beside the list, finds the few pending searches worth reading; the list is compacted only
	 * when one of them is superseded */
	unsigned char first = (unsigned char)e->text[0];
	int k = -1;                  /* the first slot freed, or -1 */
	const unsigned char *pf = a->pending_first, *end = pf + a->npending;
	for (const unsigned char *at = pf; at < end && (at = memchr(at, first, (size_t)(end - at))); at++) {
		int i = (int)(at - pf);
		event *p = a->pending[i];
		if (e->mono - p->mono < ANALYTICS_SETTLE_S && prefix_related(p->text, p->text_len, e->text, e->text_len) &&
		    strcmp(p->filters, e->filters) == 0) {
			free(p);
			a->pending[i] = NULL;
			atomic_fetch_add(&a->superseded, 1);
			if (k < 0)
				k = i;
		}
	}
	if (k >= 0) {
		for (int i = k; i < a->npending; i++) {
			if (a->pending[i]) {
				a->pending_first[k] = a->pending_first[i];
				a->pending[k++] = a->pending[i];
			}
		}
		a->npending = k;
	}
	if (a->npending == PENDING_MAX) {
		/* the older half goes out unsettled, at once: a burst costs one move, not one each */
		int half = PENDING_MAX / 2;
		memcpy(batch + *nbatch, a->pending, (size_t)half * sizeof(event *));
		*nbatch += half;
		memmove(a->pending, a->pending + half, (size_t)(PENDING_MAX - half) * sizeof(event *));
		memmove(a->pending_first, a->pending_first + half, (size_t)(PENDING_MAX - half));
		a->npending -= half;
	}
	a->pending_first[a->npending] = first;
	a->pending[a->npending++] = e;
}

/* Moves the pending searches older than ANALYTICS_SETTLE_S (all of them when all) to batch. */
static void settle_due(analytics *a, bool all, event **batch, int *nbatch)
{
	double now = mono_now();
	int k = 0;
	for (int i = 0; i < a->npending; i++) {
		if (all || now - a->pending[i]->mono >= ANALYTICS_SETTLE_S) {
			batch[(*nbatch)++] = a->pending[i];
		} else {
			a->pending_first[k] = a->pending_first[i];
			a->pending[k++] = a->pending[i];
		}
	}
	a->npending = k;
}

/* Binds and steps one event's insert. Returns SQLite's result code. */
static int insert_event(analytics *a, const event *e)
{
	sqlite3_stmt *st = e->kind == EV_SEARCH ? a->ins_search
			 : e->kind == EV_CLICK ? a->ins_click : a->ins_corr;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, e->at);
	sqlite3_bind_text(st, 2, e->qid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, e->text, -1, SQLITE_STATIC);
	if (e->kind == EV_SEARCH) {
		sqlite3_bind_text(st, 4, e->filters, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, e->results);
		sqlite3_bind_double(st, 6, e->took_ms);
		sqlite3_bind_int(st, 7, e->page);
	} else if (e->kind == EV_CLICK) {
		sqlite3_bind_int(st, 4, e->page);
	}
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc;
}

/* Writes the n events of batch in one transaction and frees them. A locked or full file (or any
 * other failure) drops the whole batch, counted in dropped. */
static void write_batch(analytics *a, event **batch, int n)
{
	if (!n)
		return;
	bool ok = sqlite3_exec(a->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
	for (int i = 0; ok && i < n; i++)
		ok = insert_event(a, batch[i]) == SQLITE_DONE;
	if (ok)
		ok = sqlite3_exec(a->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
	if (!ok) {
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
		atomic_fetch_add(&a->dropped, (unsigned long)n);
	}
	for (int i = 0; i < n; i++) {
		if (ok && batch[i]->kind == EV_SEARCH)
			atomic_fetch_add(&a->written_searches, 1);
		else if (ok && batch[i]->kind == EV_CLICK)
			atomic_fetch_add(&a->written_clicks, 1);
		free(batch[i]);
	}
}

/* The writer thread: every half second (or when the queue fills a quarter), takes what is queued,
 * settles the searches, writes what is due. On stop writes everything and returns NULL. */
static void *writer(void *arg)
{
	analytics *a = arg;
	static event *batch[ANALYTICS_QUEUE_MAX + PENDING_MAX];
	for (;;) {
		int n = 0;
		pthread_mutex_lock(&a->mu);
		if (!a->stop && a->len < ANALYTICS_QUEUE_MAX / 4) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 500000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&a->cv, &a->mu, &ts);
		}
		bool stop = a->stop;
		event *taken[ANALYTICS_QUEUE_MAX / 4];
		int ntaken = 0;
		while (a->len && ntaken < ANALYTICS_QUEUE_MAX / 4) {
			taken[ntaken++] = a->queue[a->head];
			a->head = (a->head + 1) % ANALYTICS_QUEUE_MAX;
			a->len--;
		}
		bool more = a->len > 0;
		atomic_store(&a->queued, a->len);
		pthread_mutex_unlock(&a->mu);
		for (int i = 0; i < ntaken; i++) {
			if (taken[i]->kind == EV_SEARCH)
				settle_add(a, taken[i], batch, &n);
			else
				batch[n++] = taken[i];
		}
		settle_due(a, stop && !more, batch, &n);
		write_batch(a, batch, n);
		if (stop && !more && !a->npending)
			return NULL;
	}
}

/* Prepares the three inserts. Returns 0 or an SQLite code. */
static int prepare(analytics *a)
{
	int rc = sqlite3_prepare_v2(a->db,
		"INSERT INTO searches(at, qid, query, filters, results, took_ms, page, corrected) "
		"VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT corrected FROM corrections WHERE qid = ?2))",
		-1, &a->ins_search, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(a->db, "INSERT INTO clicks(at, qid, path, rank) VALUES(?1, ?2, ?3, ?4)",
					-1, &a->ins_click, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(a->db,
			"INSERT OR REPLACE INTO corrections(at, qid, corrected) VALUES(?1, ?2, ?3)", -1,
			&a->ins_corr, NULL);
	return rc;
}

/* Opens path, sets WAL, creates the tables, records the retention and applies it. Returns 0 or
 * an ATLAS_E* code with err set. */
static int open_db(analytics *a, const char *path, int days, atlas_error *err)
{
	if (sqlite3_open_v2(path, &a->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_EIO, "cannot open analytics file %s: %s", path,
				       a->db ? sqlite3_errmsg(a->db) : "out of memory");
	char sql[512];
	snprintf(sql, sizeof(sql),
		 "INSERT OR REPLACE INTO meta(key, value) VALUES('retention_days', '%d');"
		 "DELETE FROM searches WHERE at < strftime('%%s','now') - %d * 86400;"
		 "DELETE FROM clicks WHERE at < strftime('%%s','now') - %d * 86400;"
		 "DELETE FROM corrections WHERE at < strftime('%%s','now') - %d * 86400;",
		 days, days, days, days);
	char *msg = NULL;
	if (sqlite3_exec(a->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(a->db, atlas_analytics_sql, NULL, NULL, &msg) != SQLITE_OK || prepare(a) != SQLITE_OK) {
		atlas_error_set(err, ATLAS_ESQL, "analytics file %s: %s", path,
				msg ? msg : sqlite3_errmsg(a->db));
		sqlite3_free(msg);
		return ATLAS_ESQL;
	}
	/* retention is the nightly job's too: a full disk or a locked file only delays it */
	if (sqlite3_exec(a->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "atlas-serve: analytics file %s: retention not applied: %s\n", path,
			msg ? msg : sqlite3_errmsg(a->db));
		sqlite3_free(msg);
	}
	/* a locked file fails the batch at once: a request never waits, and neither does the writer */
	sqlite3_busy_timeout(a->db, 0);
	return 0;
}

/* Frees the statements and closes the file. */
static void close_db(analytics *a)
{
	sqlite3_finalize(a->ins_search);
	sqlite3_finalize(a->ins_click);
	sqlite3_finalize(a->ins_corr);
	sqlite3_close(a->db);
}

/* Opens the analytics file and starts its writer. Returns 0 or an ATLAS_E* code with err set. */
int analytics_open(analytics **out, const char *path, int days, atlas_error *err)
{
	*out = NULL;
	analytics *a = calloc(1, sizeof(*a));
	if (!a)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	int rc = open_db(a, path, days, err);
	if (rc) {
		close_db(a);
		free(a);
		return rc;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->thread, NULL, writer, a)) {
		close_db(a);
		free(a);
		return atlas_error_set(err, ATLAS_ENOMEM, "cannot start the analytics writer");
	}
	active = a;
	*out = a;
	return 0;
}

/* Flushes, stops the writer and closes. Accepts NULL. */
void analytics_close(analytics *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	if (active == a)
		active = NULL;
	close_db(a);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
}

/* Appends the analytics counters to out. Returns 0 or ATLAS_ENOMEM. */
int analytics_render_metrics(analytics *a, strbuf *out)
{
	unsigned long ws = a ? atomic_load(&a->written_searches) : 0;
	unsigned long wc = a ? atomic_load(&a->written_clicks) : 0;
	strbuf_printf(out,
		"# HELP atlas_analytics_rows_written_total Analytics rows written to the file.\n"
		"# TYPE atlas_analytics_rows_written_total counter\n"
		"atlas_analytics_rows_written_total{kind=\"search\"} %lu\n"
		"atlas_analytics_rows_written_total{kind=\"click\"} %lu\n"
		"# HELP atlas_analytics_rows_dropped_total Analytics rows dropped: queue full, file "
		"locked or full, write failed.\n"
		"# TYPE atlas_analytics_rows_dropped_total counter\n"
		"atlas_analytics_rows_dropped_total %lu\n"
		"# HELP atlas_analytics_searches_superseded_total Searches not recorded because the "
		"reader went on typing.\n"
		"# TYPE atlas_analytics_searches_superseded_total counter\n"
		"atlas_analytics_searches_superseded_total %lu\n"
		"# HELP atlas_analytics_queue_length Analytics events waiting for the writer.\n"
		"# TYPE atlas_analytics_queue_length gauge\n"
		"atlas_analytics_queue_length %ld\n",
		ws, wc, a ? atomic_load(&a->dropped) : 0UL, a ? atomic_load(&a->superseded) : 0UL,
		a ? atomic_load(&a->queued) : 0L);
	return out->oom ? ATLAS_ENOMEM : 0;
}
