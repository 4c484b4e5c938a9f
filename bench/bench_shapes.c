/* bench_shapes.c - the cost of each query of a file, one line each: the engine's work counters
 * (postings, candidates, expansions), whether the work budget cut it (partial), and its in-process
 * latency (median of ROUNDS runs), as atlas-serve holds the index. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

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

/* Reads QUERIES (name<TAB>query<TAB>limit<TAB>offset<TAB>type<TAB>topic, '#' comments, empty
 * fields for the defaults) and prints, per query: name, median microseconds, the work counters,
 * partial, total. Returns 0, 1 when the index or the file cannot be read, 2 for usage. */
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
	double *ts = malloc((size_t)rounds * sizeof(double));
	char line[8192];
	printf("%-40s %10s %9s %10s %10s %7s %7s\n", "shape", "median_us", "postings", "candidates",
	       "expansions", "partial", "total");
	while (ts && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = '\0';
		char *field[6] = { NULL };
		char *p = line;
		for (int k = 0; k < 6; k++) {
			field[k] = p;
			char *tab = p ? strchr(p, '\t') : NULL;
			if (tab)
				*tab = '\0';
			p = tab ? tab + 1 : NULL;
		}
		atlas_search_params sp = { field[1] ? field[1] : "", 10, 0, NULL, NULL, false, false };
		if (field[2] && *field[2])
			sp.limit = atoi(field[2]);
		if (field[3] && *field[3])
			sp.offset = atoi(field[3]);
		if (field[4] && *field[4])
			sp.type = field[4];
		if (field[5] && *field[5])
			sp.topic = field[5];
		atlas_results res;
		atlas_work w = { 0, 0, 0 };
		bool partial = false;
		int total = 0;
		int n = 0;
		for (int r = 0; r < rounds; r++) {
			double t0 = now_us();
			if (atlas_search(&res, e, &sp, &err)) {
				fprintf(stderr, "bench_shapes: %s: %s\n", field[0], err.msg);
				break;
			}
			ts[n++] = now_us() - t0;
			w = res.work;
			partial = res.partial;
			total = res.total;
			atlas_results_free(&res);
		}
		if (!n)
			continue;
		qsort(ts, (size_t)n, sizeof(double), cmp_double);
		printf("%-40s %10.1f %9ld %10ld %10ld %7s %7d\n", field[0], ts[n / 2], w.postings,
		       w.candidates, w.expansions, partial ? "yes" : "no", total);
	}
	free(ts);
	fclose(f);
	atlas_engine_free(e);
	return 0;
}
