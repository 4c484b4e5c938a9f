/* metrics.c - lock-free request counters and latency histograms in Prometheus text format. */
#include "metrics.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"

#define STATUS_MIN 100
#define STATUS_MAX 599

/* Upper bounds of the latency buckets, in seconds (+Inf is implied). */
static const double bounds[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
				 0.025,  0.05,    0.1,    0.25,  0.5,    1.0,   2.5 };
#define NBOUNDS ((int)(sizeof(bounds) / sizeof(bounds[0])))
#define DURATION "atlas_request_duration_seconds"
#define REQUESTS "atlas_requests_total"

static const char *const route_names[ROUTE_COUNT] = {
	"/api/search", "/api/suggest", "/api/next", "/healthz",
	"/metrics",    "/",            "asset",     "unmatched",
	"/api/batch",  "meilisearch", "/api/click",
};

struct metrics {
	atomic_ulong requests[ROUTE_COUNT][STATUS_MAX - STATUS_MIN + 1];
	atomic_ulong buckets[ROUTE_COUNT][NBOUNDS + 1]; /* non-cumulative; the last is +Inf */
	atomic_ulong sum_ns[ROUTE_COUNT];
	atomic_ulong count[ROUTE_COUNT];
};

/* Returns the label of route, "unmatched" for anything out of range. */
const char *metrics_route_name(int route)
{
	if (route < 0 || route >= ROUTE_COUNT)
		route = ROUTE_UNMATCHED;
	return route_names[route];
}

/* Allocates zeroed counters (calloc'd atomics start at zero). Returns 0 or ATLAS_ENOMEM. */
int metrics_new(metrics **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : ATLAS_ENOMEM;
}

/* Counts one request; statuses outside 100..599 are counted as 599. Never fails. */
void metrics_observe(metrics *m, int route, int status, double seconds)
{
	if (route < 0 || route >= ROUTE_COUNT)
		route = ROUTE_UNMATCHED;
	if (status < STATUS_MIN || status > STATUS_MAX)
		status = STATUS_MAX;
	if (seconds < 0)
		seconds = 0;
	const memory_order relaxed = memory_order_relaxed;
	atomic_fetch_add_explicit(&m->requests[route][status - STATUS_MIN], 1, relaxed);
	int b = 0;
	while (b < NBOUNDS && seconds > bounds[b])
		b++;
	atomic_fetch_add_explicit(&m->buckets[route][b], 1, relaxed);
	atomic_fetch_add_explicit(&m->sum_ns[route], (unsigned long)(seconds * 1e9), relaxed);
	atomic_fetch_add_explicit(&m->count[route], 1, relaxed);
}

/* Appends one "# HELP" and "# TYPE" pair. */
static void header(strbuf *out, const char *name, const char *type, const char *help)
{
	strbuf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One gauge or counter of the server's state: its name, Prometheus type and help text, its value
 * (every count here is far below 2^53, so a double holds it exactly) printed with decimals places, and
 * whether it is shown at all. */
typedef struct gauge_row {
	const char *name, *type, *help;
	double value;
	int decimals;
	bool shown;
} gauge_row;

/* Writes row's HELP and TYPE lines, then its sample. Errors are kept in out->oom. */
static void gauge(strbuf *out, const gauge_row *row)
{
	header(out, row->name, row->type, row->help);
	strbuf_printf(out, "%s %.*f\n", row->name, row->decimals, row->value);
}

/* Renders every metric into out. Returns 0 or ATLAS_ENOMEM (out->oom set). */
int metrics_render(metrics *m, const metrics_gauges *g, strbuf *out)
{
	const memory_order relaxed = memory_order_relaxed;
	header(out, "atlas_requests_total", "counter",
	       "HTTP requests answered, by route and status.");
	for (int r = 0; r < ROUTE_COUNT; r++)
		for (int s = STATUS_MIN; s <= STATUS_MAX; s++) {
			unsigned long n =
				atomic_load_explicit(&m->requests[r][s - STATUS_MIN], relaxed);
			if (n)
				strbuf_printf(out, "%s{route=\"%s\",status=\"%d\"} %lu\n", REQUESTS,
					      route_names[r], s, n);
		}
	header(out, DURATION, "histogram",
	       "Time from the request's headers to the end of its response, by route.");
	for (int r = 0; r < ROUTE_COUNT; r++) {
		unsigned long count = atomic_load_explicit(&m->count[r], relaxed);
		if (!count)
			continue;
		unsigned long cum = 0;
		for (int b = 0; b <= NBOUNDS; b++) {
			char le[32];
			cum += atomic_load_explicit(&m->buckets[r][b], relaxed);
			if (b < NBOUNDS)
				snprintf(le, sizeof(le), "%g", bounds[b]);
			else
				snprintf(le, sizeof(le), "+Inf");
			strbuf_printf(out, "%s_bucket{route=\"%s\",le=\"%s\"} %lu\n", DURATION,
				      route_names[r], le, cum);
		}
		strbuf_printf(out, "%s_sum{route=\"%s\"} %.9f\n", DURATION, route_names[r],
			      atomic_load_explicit(&m->sum_ns[r], relaxed) / 1e9);
		strbuf_printf(out, "%s_count{route=\"%s\"} %lu\n", DURATION, route_names[r], count);
	}
	const gauge_row rows[] = {
		{ "atlas_requests_in_flight", "gauge",
		  "Requests being answered now.",
		  (double)(g->inflight), 0, true },
		{ "atlas_index_generation", "gauge",
		  "Generation of the served index: 1 at start, +1 per swap.",
		  (double)(g->generation), 0, true },
		{ "atlas_index_swaps_total", "counter",
		  "Index files swapped in after validation.",
		  (double)(g->swaps), 0, true },
		{ "atlas_index_swaps_refused_total", "counter",
		  "Changed index files refused because they failed validation.",
		  (double)(g->swaps_refused), 0, true },
		{ "atlas_index_age_seconds", "gauge",
		  "Seconds since the served index was built.",
		  (double)(g->index_age_s), 0, true },
		{ "atlas_uptime_seconds", "gauge",
		  "Seconds since the server started.",
		  (double)(g->uptime_s), 3, true },
		{ "atlas_cache_entries", "gauge",
		  "Responses held by the response cache.",
		  (double)(g->cache_entries), 0, true },
		{ "atlas_cache_capacity", "gauge",
		  "Most responses the cache holds (0: disabled).",
		  (double)(g->cache_capacity), 0, true },
		{ "atlas_engine_warm_misses_total", "counter",
		  "Requests that waited for the shared engine: more threads than warm engines.",
		  (double)(g->warm_misses), 0, true },
		{ "atlas_cache_bytes", "gauge",
		  "Bytes held by the response cache (keys, bodies, per-entry overhead).",
		  (double)(g->cache_bytes), 0, true },
		{ "atlas_cache_max_bytes", "gauge",
		  "Most bytes the cache holds (0: disabled).",
		  (double)(g->cache_max_bytes), 0, true },
		{ "atlas_search_zero_results_total", "counter",
		  "Searches answered with no results.",
		  (double)(g->zero_results), 0, true },
		{ "atlas_index_kept_pages", "gauge",
		  "Pages the served index kept at their previous version or left out (--keep-going).",
		  (double)(g->kept_pages), 0, true },
		{ "atlas_reindex_failed", "gauge",
		  "1 when the last reindex failed (its status file beside the index), else 0.",
		  (double)(g->reindex_failed), 0, true },
		{ "atlas_reindex_last_run_timestamp_seconds", "gauge",
		  "When the last reindex ran (unix seconds).",
		  (double)(g->reindex_at), 0, g->reindex_known && g->reindex_at },
		{ "atlas_cache_hits_total", "counter",
		  "Response cache hits.",
		  (double)(g->cache_hits), 0, true },
		{ "atlas_cache_misses_total", "counter",
		  "Response cache misses.",
		  (double)(g->cache_misses), 0, true },
		{ "atlas_cache_evictions_total", "counter",
		  "Responses evicted to make room.",
		  (double)(g->cache_evictions), 0, true },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].shown)
			gauge(out, &rows[i]);
	return out->oom ? ATLAS_ENOMEM : 0;
}

/* Frees the counters. Accepts NULL. */
void metrics_free(metrics *m)
{
	free(m);
}
