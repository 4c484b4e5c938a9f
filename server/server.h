/* server.h - atlas-serve's configuration and the state every request handler shares. */
#ifndef ATLAS_SERVER_H
#define ATLAS_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "analytics.h"
#include "cache.h"
#include "live.h"
#include "metrics.h"

#define SERVE_QUERY_MAX 256      /* longest q (and topic) accepted, in bytes */
#define SERVE_PARAM_MAX 1024     /* longest path or guide accepted, in bytes */
#define SERVE_SEEN_MAX 8192      /* longest seen list accepted, in bytes */

/* The command line, parsed. */
typedef struct serve_config {
	const char *index;           /* --index FILE */
	const char *bind;            /* --bind ADDR */
	int port;                    /* --port N */
	int threads;                 /* --threads N */
	const char **cors;           /* --cors ORIGIN..., "*" allows any origin */
	int ncors;
	long cache_size;             /* --cache-size N, 0 disables the cache */
	long cache_bytes;            /* --cache-bytes N, 0 disables the cache */
	const char *log_path;        /* --log FILE, NULL for stderr */
	long max_index_age;          /* --max-index-age SECONDS, 0 = never stale */
	const char *index_uid;       /* --index-uid NAME, the Meilisearch index uid (default pages) */
	const char *api_key_file;    /* --api-key-file FILE, NULL for none */
	char *api_key;               /* its contents (surrounding white space left out), malloc'd */
	long request_timeout;        /* --request-timeout SECONDS */
	const char *analytics_path;  /* --analytics FILE, NULL for none */
	int analytics_days;          /* --analytics-days N */
	struct sockaddr_storage trust[16];  /* --trust-proxy ADDR... */
	int ntrust;
	long deadline_ms;            /* --deadline MS: a search stops this long after its request */
} serve_config;

/* Shared by every worker thread; set up before the daemon starts, torn down after it stopped. */
typedef struct server {
	const serve_config *cfg;
	live *index;
	atlas_cache *cache;
	metrics *metrics;
	FILE *log;                   /* the access log */
	bool cors_any;               /* "*" among the origins */
	double started;              /* CLOCK_MONOTONIC seconds at start, for uptime_s */
	atomic_long inflight;        /* requests between their first handler call and completion */
	atomic_bool closing;         /* shutting down: responses carry Connection: close */
	struct pool *workers;        /* the search workers, fed by the HTTP threads */
	analytics *analytics;        /* --analytics, NULL when off */
	atomic_ulong zero_results;   /* searches answered with no results */
} server;

/* The MHD access handler (cls is the server): answers on the second call, never the first. */
enum MHD_Result serve_request(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls);

/* Set on the HTTP thread when serve_request closes the connection of a client that has gone (no
 * answer to write), so that MHD's "internal error" message for that close is not logged; the
 * logger clears it, and so does the next call of serve_request. */
extern _Thread_local bool serve_abandoned;

/* The MHD completion callback: counts, logs and frees the request started by serve_request. */
void serve_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		     enum MHD_RequestTerminationCode toe);

/* A search worker's job (pool_fn; cls is the server): answers the suspended request of job into
 * its reply and resumes its connection, whose handler call then sends the answer. */
struct pool_job;
void serve_work(struct pool_job *job, void *cls);

/* Empties the response cache (the live index's swap callback; cls is the server). */
void serve_on_swap(void *cls);

/* Returns CLOCK_MONOTONIC in seconds. */
double serve_now(void);

#endif
