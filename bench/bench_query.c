/* bench_query.c - in-process latency of search, suggest and next over a query file, reported as
 * median, p50 and p99 in microseconds. Snippets, sections, facets and corrections included; next
 * from every page without seen ("next"), and from every guide step with the step before it read
 * ("next+seen": the route the reader is on found from what was read). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "engine.h"
#include "json.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n)
{
	if (!n)
		return;
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += t[i];
	printf("%-8s n=%-6d p50 %8.1f us  p90 %8.1f us  p99 %8.1f us  max %8.1f us  mean %8.1f us\n",
	       what, n, t[n / 2], t[(int)(n * 0.9)], t[(int)(n * 0.99)], t[n - 1], sum / n);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_query INDEX QUERIES.tsv [ROUNDS [fts5|table|held [P,C,E|- [FILTER]]]]\n"
				"  fts5: search through FTS5 even when the postings could be held in memory\n"
				"  table: through the postings table (atlas_engine_read_postings_table) instead\n"
				"  held: the postings held in memory when the index is small (the default)\n"
				"  P,C,E: the work budget, as atlas-serve's --budget (-: the engine's)\n"
				"  FILTER: type=T or topic=T, every search filtered so, as atlas-query --type or --topic\n"
				"  QUERIES.tsv: one query per line in its first tab-separated column ('#' comments)\n");
		return 2;
	}
	int rounds = argc > 3 ? atoi(argv[3]) : 20;
	const char *filter = argc > 6 ? argv[6] : NULL, *type = NULL, *topic = NULL;
	if (filter && strncmp(filter, "type=", 5) == 0)
		type = filter + 5;
	else if (filter && strncmp(filter, "topic=", 6) == 0)
		topic = filter + 6;
	else if (filter) {
		fprintf(stderr, "bench_query: the filter must be type=T or topic=T\n");
		return 2;
	}
	if (argc > 5 && strcmp(argv[5], "-") != 0) {
		atlas_work w;
		if (atlas_parse_work_budget(argv[5], &w)) {
			fprintf(stderr, "bench_query: the budget must be POSTINGS[,CANDIDATES[,EXPANSIONS]]\n");
			return 2;
		}
		atlas_set_work_budget(&w);
	}
	atlas_engine *e = NULL;
	atlas_error err = { 0, "" };
	/* as atlas-serve holds it: the postings in memory when the index is small */
	double open_at = now_us();
	if (atlas_engine_open(&e, argv[1], &err)) {
		fprintf(stderr, "bench_query: %s\n", err.msg);
		return 1;
	}
	double held_at = now_us();
	bool fts5 = argc > 4 && strcmp(argv[4], "fts5") == 0;
	bool table = argc > 4 && strcmp(argv[4], "table") == 0;
	if (table && atlas_engine_read_postings_table(e, &err)) {
		fprintf(stderr, "bench_query: %s\n", err.msg);
		return 1;
	}
	if (!fts5 && !table && atlas_engine_hold_postings(e, &err)) {
		fprintf(stderr, "bench_query: %s\n", err.msg);
		return 1;
	}
	printf("open     %.1f ms, postings held in %.1f ms\n", (held_at - open_at) / 1e3,
	       (now_us() - held_at) / 1e3);
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	char **qs = NULL;
	int nq = 0, cap = 0;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\t\n")] = '\0';
		if (nq == cap) {
			cap = cap ? cap * 2 : 256;
			qs = realloc(qs, (size_t)cap * sizeof(char *));
		}
		qs[nq++] = strdup(line);
	}
	fclose(f);
	int total = nq * rounds, nd = atlas_engine_ndocs(e);
	double *ts = malloc((size_t)total * sizeof(double));
	double *tg = malloc((size_t)total * sizeof(double));
	double *tj = malloc((size_t)total * sizeof(double));
	double *tn = malloc((size_t)(rounds * nd) * sizeof(double));
	int n = 0, ng = 0, nn = 0, nj = 0;
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < nq; i++) {
			atlas_search_params p = { qs[i], 10, 0, type, topic, false, false };
			atlas_results res;
			double t0 = now_us();
			if (atlas_search(&res, e, &p, &err) == 0) {
				ts[n++] = now_us() - t0;
				t0 = now_us();
				free(atlas_json_search(e, &res));
				tj[nj++] = now_us() - t0;
				atlas_results_free(&res);
			}
			atlas_suggestion s[10];
			t0 = now_us();
			atlas_suggest(s, 10, e, qs[i]);
			tg[ng++] = now_us() - t0;
		}
	for (int r = 0; r < rounds; r++)
		for (int d = 0; d < nd; d++) {
			atlas_next_params np = { atlas_engine_doc(e, d)->path, NULL, NULL, 0, 5 };
			atlas_next_results nr;
			double t0 = now_us();
			if (atlas_next(&nr, e, &np, &err) == 0)
				atlas_next_results_free(&nr);
			tn[nn++] = now_us() - t0;
		}
	/* every guide step after the first, with the step before it read */
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char **pairs = NULL; /* src, seen, src, seen... */
	int npairs = 0, pcap = 0;
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db,
			       "SELECT a.path, b.path FROM guide_steps s JOIN guide_steps p ON p.guide_id = s.guide_id"
			       " AND p.step = s.step - 1 JOIN docs a ON a.id = s.doc_id JOIN docs b ON b.id = p.doc_id",
			       -1, &st, NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW && npairs < 100000) {
			if (npairs == pcap) {
				pcap = pcap ? pcap * 2 : 256;
				pairs = realloc(pairs, (size_t)pcap * 2 * sizeof(char *));
			}
			pairs[2 * npairs] = strdup((const char *)sqlite3_column_text(st, 0));
			pairs[2 * npairs + 1] = strdup((const char *)sqlite3_column_text(st, 1));
			npairs++;
		}
	sqlite3_finalize(st);
	sqlite3_close(db);
	double *tr = malloc((size_t)(rounds * npairs + 1) * sizeof(double));
	int nr2 = 0;
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < npairs; k++) {
			const char *seen[1] = { pairs[2 * k + 1] };
			atlas_next_params np = { pairs[2 * k], NULL, seen, 1, 5 };
			atlas_next_results nr;
			double t0 = now_us();
			if (atlas_next(&nr, e, &np, &err) == 0)
				atlas_next_results_free(&nr);
			tr[nr2++] = now_us() - t0;
		}
	for (int k = 0; k < 2 * npairs; k++)
		free(pairs[k]);
	free(pairs);
	report("search", ts, n);
	report("json", tj, nj);
	report("suggest", tg, ng);
	report("next", tn, nn);
	report("next+seen", tr, nr2);
	free(tr);
	for (int i = 0; i < nq; i++)
		free(qs[i]);
	free(qs);
	free(ts);
	free(tg);
	free(tj);
	free(tn);
	atlas_engine_free(e);
	return 0;
}
