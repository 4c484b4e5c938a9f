/* analytics.h - search analytics without personal data: settled searches and reported clicks,
 * queued by request threads and written to a SQLite file by one background thread in batches. */
#ifndef ATLAS_ANALYTICS_H
#define ATLAS_ANALYTICS_H

#include <stdint.h>

#include "error.h"
#include "strbuf.h"

#define ANALYTICS_QUEUE_MAX 8192     /* events waiting for the writer; more are dropped */
#define ANALYTICS_SETTLE_S 2.0       /* a search is settled when no search that extends or
				      * shortens its words (same filters) follows within this */
#define ANALYTICS_DAYS_DEFAULT 90
#define ANALYTICS_QID_LEN 16         /* hex digits of a query id */

typedef struct analytics analytics;

/* Opens (creating) the analytics file path in WAL mode, records days as its retention, deletes
 * rows older than that, and starts the writer thread. Returns 0 with *out set, or ATLAS_EIO,
 * ATLAS_ESQL or ATLAS_ENOMEM with err set (nothing is left open). */
int analytics_open(analytics **out, const char *path, int days, atlas_error *err);

/* Writes what is queued and pending, stops the writer, closes the file. Accepts NULL. */
void analytics_close(analytics *a);

/* Returns the analytics the server records into, or NULL when --analytics is off. */
analytics *analytics_active(void);

/* Writes the query id of a search (build_id and its normalized request) into out, which holds
 * ANALYTICS_QID_LEN + 1 bytes: the same request on the same index has the same id. */
void analytics_qid(char *out, const char *build_id, const char *norm, size_t norm_len);

/* What one search was; strings are copied by analytics_search. */
typedef struct analytics_search_row {
	const char *qid, *query, *filters;
	long results;
	double took_ms;
	int page;                    /* 1 for the first page of results */
} analytics_search_row;

/* Queues a search (never blocks on the file; a full queue drops it, counted). */
void analytics_search(analytics *a, const analytics_search_row *row);

/* Queues the words a query id's results were searched for (its spelling correction). */
void analytics_correction(analytics *a, const char *qid, const char *corrected);

/* Queues a click on path at rank (1-based, 0 unknown) in the results of qid. */
void analytics_click(analytics *a, const char *qid, const char *path, int rank);

/* Appends the analytics counters (rows written, dropped, queued) in Prometheus text to out.
 * Accepts NULL a (counters of 0). Returns 0 or ATLAS_ENOMEM. */
int analytics_render_metrics(analytics *a, strbuf *out);

#endif
