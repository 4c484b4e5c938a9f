/* metrics.h - request counters and latency histograms, rendered as Prometheus text for /metrics. */
#ifndef ATLAS_METRICS_H
#define ATLAS_METRICS_H

#include <stdbool.h>

#include "strbuf.h"

/* The routes requests are counted by (the "route" label). */
enum {
	ROUTE_SEARCH,
	ROUTE_SUGGEST,
	ROUTE_NEXT,
	ROUTE_HEALTHZ,
	ROUTE_METRICS,
	ROUTE_PAGE,
	ROUTE_ASSET,
	ROUTE_UNMATCHED,
	ROUTE_BATCH,
	ROUTE_MEILI,
	ROUTE_CLICK,
	ROUTE_COUNT
};

typedef struct metrics metrics;

/* Values sampled by the caller when /metrics is rendered. */
typedef struct metrics_gauges {
	unsigned long generation;      /* index generation, 1 for the index served at start */
	unsigned long swaps;           /* successful hot swaps */
	unsigned long swaps_refused;   /* changed index files that failed validation */
	double index_age_s;
	double uptime_s;
	long inflight;
	unsigned long cache_entries, cache_capacity, cache_hits, cache_misses, cache_evictions;
	unsigned long cache_bytes, cache_max_bytes;
	unsigned long warm_misses;     /* requests that found no warm engine of their generation */
	unsigned long zero_results;    /* searches answered with no results */
	int kept_pages;                /* pages the index kept from its predecessor */
	bool reindex_known, reindex_failed; /* the last reindex's status file: read, failed */
	long long reindex_at;          /* unix seconds of the last reindex, 0 unknown */
} metrics_gauges;

/* Returns the label of a route ("/api/search", ..., "asset", "unmatched"). */
const char *metrics_route_name(int route);

/* Creates zeroed counters into *out. Returns 0 or ATLAS_ENOMEM. */
int metrics_new(metrics **out);

/* Counts one finished request of route with HTTP status that took seconds. Lock-free; never
 * fails. */
void metrics_observe(metrics *m, int route, int status, double seconds);

/* Appends the Prometheus text exposition of the counters and g to out. Returns 0 or
 * ATLAS_ENOMEM. */
int metrics_render(metrics *m, const metrics_gauges *g, strbuf *out);

/* Frees the counters. Accepts NULL. */
void metrics_free(metrics *m);

#endif
