/* bench_shapes.c - the cost of each query of a file, one line each: the engine's work counters
 * (postings, candidates, expansions), whether the work budget cut it (partial), and its in-process
 * latency (median of ROUNDS runs, each round running every query once), as atlas-serve holds the
 * index. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "grow.h"

/* Returns CLOCK_MONOTONIC in microseconds. */
static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* qsort order of doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One query of the file: its fields, its parameters, its times and what its last run did. */
typedef struct query {
	char *line; /* the fields, NUL-separated */
	atlas_search_params sp;
	const char *name;
	double *ts;
	int n;
	atlas_work w;
	bool partial;
	int total;
} query;

/* Reads QUERIES (name<TAB>query<TAB>limit<TAB>offset<TAB>type<TAB>topic, '#' comments, empty
 * fields for the defaults) and prints, per query: name, median microseconds, the work counters,
 * partial, total. Returns 0, 1 when the index or the file cannot be read or a search fails, 2 for
 * usage. */
int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_shapes INDEX QUERIES.tsv [ROUNDS]\n"
				"  QUERIES.tsv: name, query, limit, offset, type, topic (tab-separated; "
				"empty for the default)\n");
		return 2;
	}
	int rounds = argc > 3 ? atoi(argv[3]) : 9;
	if (rounds < 1)
		rounds = 1;
	atlas_engine *e = NULL;
	atlas_error err = { 0, "" };
	if (atlas_engine_open(&e, argv[1], &err) || atlas_engine_hold_postings(e, &err)) {
		fprintf(stderr, "bench_shapes: %s\n", err.msg);
		atlas_engine_free(e);
		return 1;
	}
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		perror(argv[2]);
		atlas_engine_free(e);
		return 1;
	}
	/* every query read first, then timed round by round (each round runs every query once), so
	 * that a slow stretch of a shared machine falls on all queries alike, not on one query's runs */
	query *qs = NULL;
	int nq = 0, cap = 0;
	char line[8192];
	int rc = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (atlas_grow(&qs, &cap, nq, sizeof(*qs), 64)) {
			rc = 1;
			break;
		}
		query *q = &qs[nq];
		memset(q, 0, sizeof(*q));
		q->line = strdup(line);
		q->ts = malloc((size_t)rounds * sizeof(double));
		if (!q->line || !q->ts) {
			free(q->line);
			free(q->ts);
			rc = 1;
			break;
		}
		nq++;
		char *field[6] = { NULL };
		char *p = q->line;
		for (int k = 0; k < 6; k++) {
			field[k] = p;
			char *tab = p ? strchr(p, '\t') : NULL;
			if (tab)
				*tab = '\0';
			p = tab ? tab + 1 : NULL;
		}
		q->name = field[0];
		q->sp = (atlas_search_params){ field[1] ? field[1] : "", 10, 0, NULL, NULL, false, false };
		if (field[2] && *field[2])
			q->sp.limit = atoi(field[2]);
		if (field[3] && *field[3])
			q->sp.offset = atoi(field[3]);
		if (field[4] && *field[4])
			q->sp.type = field[4];
		if (field[5] && *field[5])
			q->sp.topic = field[5];
	}
	if (rc)
		fprintf(stderr, "bench_shapes: out of memory reading %s\n", argv[2]);
	for (int r = 0; r < rounds && !rc; r++)
		for (int i = 0; i < nq; i++) {
			query *q = &qs[i];
			atlas_results res;
			double t0 = now_us();
			if (atlas_search(&res, e, &q->sp, &err)) {
				fprintf(stderr, "bench_shapes: %s: %s\n", q->name, err.msg);
				rc = 1;
				break;
			}
			q->ts[q->n++] = now_us() - t0;
			q->w = res.work;
			q->partial = res.partial;
			q->total = res.total;
			atlas_results_free(&res);
		}
	printf("%-40s %10s %9s %10s %10s %7s %7s\n", "shape", "median_us", "postings", "candidates",
	       "expansions", "partial", "total");
	for (int i = 0; i < nq && !rc; i++) {
		query *q = &qs[i];
		qsort(q->ts, (size_t)q->n, sizeof(double), cmp_double);
		printf("%-40s %10.1f %9ld %10ld %10ld %7s %7d\n", q->name, q->ts[q->n / 2], q->w.postings,
		       q->w.candidates, q->w.expansions, q->partial ? "yes" : "no", q->total);
	}
	for (int i = 0; i < nq; i++) {
		free(qs[i].line);
		free(qs[i].ts);
	}
	free(qs);
	fclose(f);
	atlas_engine_free(e);
	return rc;
}
